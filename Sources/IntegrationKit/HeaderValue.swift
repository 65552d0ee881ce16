import Core

/// The one check of a value bound for a request line or header field: a token, a cursor, a
/// validator, a URL, whatever a server or a config supplied.
///
/// RFC 9110 §5.5 lets a field value hold visible characters (VCHAR, 0x21–0x7E), spaces and tabs
/// between them, and `obs-text` (0x80–0xFF). feedsync sends less, so that no value can split a
/// header, start another, or mean something else to one server than to another:
/// - visible ASCII, 0x21 through 0x7E;
/// - the space, 0x20, only where the value is made of words (`Bearer <token>`, an HTTP date)
///   and asks for it with `allowsSpace`, and never first or last;
/// - nothing else: no CR, LF, NUL, tab or other control character, no DEL, no byte above 0x7E;
/// - and not the empty string.
///
/// A value that fails is a server's (or config's) broken contract: it is neither sent nor stored.
///
///     let token = try HeaderValue.check(dto.accessJwt, "accessJwt", "logging in to bsky.social")
public enum HeaderValue {
    /// Whether `value` may go into a request line or header field, as the type describes.
    public static func isValid(_ value: String, allowsSpace: Bool = false) -> Bool {
        firstRefusedByte(value, allowsSpace: allowsSpace) == nil && !value.isEmpty
    }

    /// `value`, when it may go into a request line or header field.
    ///
    /// - Parameters:
    ///   - name: what the value is, for the message: `"accessJwt"`, `"next_cursor"`.
    ///   - operation: what was being done, for the message.
    /// - Throws: ``ServiceError`` `.contractViolation` naming the value and the first byte that
    ///   cannot go into a header, never the value itself (it may be a secret).
    @discardableResult
    public static func check(_ value: String, _ name: String, _ operation: String, allowsSpace: Bool = false) throws -> String {
        if value.isEmpty { throw ServiceError(.contractViolation, operation, "the \(name) is empty; it is neither sent nor stored") }
        guard let (offset, byte) = firstRefusedByte(value, allowsSpace: allowsSpace) else { return value }
        throw ServiceError(.contractViolation, operation,
                           "the \(name) holds byte 0x\(String(byte, radix: 16, uppercase: true)) at position \(offset), which a request "
                           + "header cannot carry (only visible ASCII\(allowsSpace ? " and inner spaces" : "") is sent); it is neither sent nor stored")
    }

    /// The first byte of `value` that may not be sent, with its position.
    static func firstRefusedByte(_ value: String, allowsSpace: Bool) -> (Int, UInt8)? {
        let count = value.utf8.count
        for (offset, byte) in value.utf8.enumerated() {
            switch byte {
            case 0x21...0x7E: continue
            case 0x20 where allowsSpace && offset > 0 && offset < count - 1: continue
            default: return (offset, byte)
            }
        }
        return nil
    }
}
