import Core

/// The process exit codes both executables use (from sysexits.h).
public enum ExitStatus: Int32, Sendable, CaseIterable {
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

    /// What the status means, in a line, for the manual pages (`feedsync man`).
    public var meaning: String {
        switch self {
        case .ok: "success"
        case .usage: "the command line is wrong; the usage follows the sentence"
        case .dataError: "the data is suspect: a full walk refused to delete most of a feed, an OPML file gave nothing to add, or a secret would go where a symlink or a file others can read is"
        case .noInput: "what the command names does not exist: a post, a file, or a store nothing was synced into yet"
        case .unavailable: "the backend is unreachable, failing, or answering outside its contract, even after retries"
        case .software: "an internal error, or the local store could not be opened or written"
        case .ioError: "the output could not be written (a full disk, a closed standard output); no partial file is left"
        case .temporaryFailure: "another process held the store's write lock or the feed's lease, or the config changed meanwhile; try again"
        case .credentials: "the backend rejected the credentials"
        case .config: "the config is unusable; the sentence names the file, the key path and the value"
        }
    }

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
