import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A POSIX extended regular expression, compiled once by the C library (`regcomp`) and matched
/// without case (`REG_ICASE`), reporting only whether it matches (`REG_NOSUB`).
///
/// Patterns are bounded: at most ``maxPatternBytes`` bytes, and no back-reference (`\1`…`\9`,
/// which glibc accepts in an extended expression and which can make a match take exponential
/// time). Text is matched in its first ``maxTextBytes`` bytes.
///
/// - Important: `@unchecked Sendable` because the compiled `regex_t` is only read after `init`
///   (glibc's `regexec` takes the pattern's own lock for its matching state), and freed once, in
///   `deinit`, when no other reference can exist.
final class PosixRegex: @unchecked Sendable {
    /// The longest pattern accepted, in bytes.
    static let maxPatternBytes = 1_000
    /// How much of a text is matched, in bytes.
    static let maxTextBytes = 64 << 10

    /// Why a pattern was refused, in words.
    struct CompileError: Error, CustomStringConvertible {
        let description: String
    }

    private var regex = regex_t()

    /// Compiles `pattern`.
    ///
    /// - Throws: ``CompileError`` with the C library's reason, or for a pattern that is too long,
    ///   holds a NUL byte or a back-reference.
    init(_ pattern: String) throws {
        guard !pattern.isEmpty else { throw CompileError(description: "the regular expression is empty") }
        guard pattern.utf8.count <= Self.maxPatternBytes else {
            throw CompileError(description: "the regular expression is longer than \(Self.maxPatternBytes) bytes")
        }
        guard !pattern.utf8.contains(0) else { throw CompileError(description: "the regular expression holds a NUL byte") }
        let bytes = Array(pattern.utf8)
        for index in bytes.indices.dropLast() where bytes[index] == UInt8(ascii: "\\") {
            if (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(bytes[index + 1]), index == 0 || bytes[index - 1] != UInt8(ascii: "\\") {
                throw CompileError(description: "back-references (\\1 to \\9) are not accepted: they can make a match take very long")
            }
        }
        let status = regcomp(&regex, pattern, REG_EXTENDED | REG_ICASE | REG_NOSUB)
        guard status == 0 else {
            var buffer = [CChar](repeating: 0, count: 256)
            regerror(status, &regex, &buffer, buffer.count)
            let reason = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            regfree(&regex)
            throw CompileError(description: "the regular expression does not compile: \(reason.lowercased())")
        }
    }

    deinit { regfree(&regex) }

    /// Whether the expression matches anywhere in `text` (a NUL in it ends what is matched).
    func matches(_ text: String) -> Bool {
        var bytes = Array(text.utf8.prefix(Self.maxTextBytes))
        bytes.append(0)
        return bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { regexec(&regex, $0.baseAddress!, 0, nil, 0) == 0 }
        }
    }
}
