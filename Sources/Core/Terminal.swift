/// Makes text from outside safe to print on a terminal or in a log line.
///
/// Post texts, handles, ids and server messages are data: an ANSI or OSC escape inside one
/// could clear the screen, retitle the terminal or forge a line. Control characters (C0, DEL,
/// C1) and the Unicode bidirectional overrides are shown as `\u{…}` escapes, except that a
/// line break becomes a visible `\n`. The database keeps the text as received.
///
/// Registered secrets are taken out first (``Redaction``), before the text is cut short, so a
/// cut can never leave part of one behind.
public enum Terminal {
    /// How far past `limit` the text is still searched for secrets: a secret that starts before
    /// the cut is found in the part before it whatever its encoding (a piece of
    /// ``Redaction/minimumLength`` bytes, doubly percent-encoded, is 72 bytes).
    static let redactionMargin = 256

    /// `text` with every registered secret redacted and every control character escaped, cut to
    /// `limit` characters (with `…`) if given.
    public static func safe(_ text: String, limit: Int? = nil) -> String {
        var result = ""
        var count = 0
        var searched = text
        var shortened = false
        if let limit, text.utf8.count > limit + redactionMargin {
            // Only what can be shown is searched: a long post or body costs no more than a short one.
            let shown = text.unicodeScalars.prefix(limit + redactionMargin)
            if shown.endIndex < text.unicodeScalars.endIndex {
                searched = String(Substring(shown))
                shortened = true
            }
        }
        for scalar in Redaction.redact(searched).unicodeScalars {
            if let limit, count >= limit {
                shortened = true
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
        if shortened { result += "…" }
        return result
    }
}
