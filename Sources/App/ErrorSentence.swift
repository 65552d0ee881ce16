import Core
import Foundation

/// One sentence for any error, as both executables print or log it, without Swift's dump of
/// its internals, with every registered secret redacted and any control character from outside
/// escaped (``Terminal/safe(_:limit:)``).
public func describe(_ error: any Error) -> String {
    let sentence: String
    switch error {
    case let error as ConfigError: sentence = error.description
    case let error as ServiceError: sentence = error.description
    case let error as UsageError: sentence = error.message
    case let error as OutputError: sentence = error.description
    case is CancellationError: sentence = "cancelled"
    default: sentence = "internal error: \(error.localizedDescription)"
    }
    return Terminal.safe(sentence, limit: 2_000)
}

/// Writes a line to standard error.
public func printError(_ line: String) {
    writeStandardError(line + "\n")
}

/// Writes `text` to standard error, with every registered secret redacted (``Redaction``). A
/// failure is ignored: standard error is where failures are reported, so there is nowhere left
/// to say it (and FileHandle would trap).
public func writeStandardError(_ text: String) {
    var text = Redaction.redact(text)
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
