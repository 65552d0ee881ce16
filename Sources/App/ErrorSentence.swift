import Core
import Foundation

/// One sentence for any error, as both executables print or log it, without Swift's dump of
/// its internals.
public func describe(_ error: any Error) -> String {
    switch error {
    case let error as ConfigError: return error.description
    case let error as ServiceError: return error.description
    case let error as UsageError: return error.message
    case is CancellationError: return "cancelled"
    default: return "internal error: \(error.localizedDescription)"
    }
}

/// Writes a line to standard error.
public func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
