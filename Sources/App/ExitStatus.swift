import Core

/// The process exit codes both executables use (from sysexits.h).
public enum ExitStatus: Int32, Sendable {
    case ok = 0
    /// The command line is wrong.
    case usage = 64
    /// The data is suspect: a full sync refused to delete most of a feed.
    case dataError = 65
    /// What the command names does not exist: no stored post has the id, or nothing was synced yet.
    case noInput = 66
    /// The backend could not be reached, or answered outside its contract.
    case unavailable = 69
    /// A bug or a local failure (the store could not be written).
    case software = 70
    /// The output could not be written: a full disk, `/dev/full`, a closed standard output.
    case ioError = 74
    /// Try again later: another process holds the store.
    case temporaryFailure = 75
    /// The backend rejected the credentials.
    case credentials = 77
    /// The config cannot be used.
    case config = 78

    /// The status an error ends the process with.
    public init(for error: any Error) {
        switch error {
        case is ConfigError: self = .config
        case is UsageError: self = .usage
        case is OutputError: self = .ioError
        case let error as ServiceError:
            switch error.code {
            case .unauthorized: self = .credentials
            case .rateLimited, .unavailable, .invalidResponse, .contractViolation, .invalidItem, .invalidRequest: self = .unavailable
            case .storage: self = .software
            case .notFound: self = .noInput
            case .locked: self = .temporaryFailure
            case .refused: self = .dataError
            }
        default: self = .software
        }
    }
}

/// A command line that cannot be run, with the usage of the command it was meant for.
public struct UsageError: Error, CustomStringConvertible {
    public var message: String
    public var usage: String

    public init(_ message: String, usage: String) {
        self.message = message
        self.usage = usage
    }

    public var description: String { message }
}
