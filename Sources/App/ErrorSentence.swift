import Core
import Foundation

/// One sentence for any error, as both executables print or log it, without Swift's dump of
/// its internals, and with any control character from outside escaped (``Terminal/safe(_:limit:)``).
public func describe(_ error: any Error) -> String {
    let sentence: String
    switch error {
    case let error as ConfigError: sentence = error.description
    case let error as ServiceError: sentence = error.description
    case let error as UsageError: sentence = error.message
    case is CancellationError: sentence = "cancelled"
    default: sentence = "internal error: \(error.localizedDescription)"
    }
    return Terminal.safe(sentence, limit: 2_000)
}

/// Writes a line to standard error.
public func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
