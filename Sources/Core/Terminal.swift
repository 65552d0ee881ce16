/// Makes text from outside safe to print on a terminal or in a log line.
///
/// Post texts, handles, ids and server messages are data: an ANSI or OSC escape inside one
/// could clear the screen, retitle the terminal or forge a line. Control characters (C0, DEL,
/// C1) and the Unicode bidirectional overrides are shown as `\u{…}` escapes, except that a
/// line break becomes a visible `\n`. The database keeps the text as received.
public enum Terminal {
    /// `text` with every control character escaped, cut to `limit` characters (with `…`) if given.
    public static func safe(_ text: String, limit: Int? = nil) -> String {
        var result = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if let limit, count >= limit {
                result += "…"
                break
            }
            count += 1
            switch scalar.value {
            case 0x0A: result += "\\n"
            case 0x0D: result += "\\r"
            case 0x09: result += "\\t"
            case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069:
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
