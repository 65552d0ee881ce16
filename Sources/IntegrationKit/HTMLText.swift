/// Renders HTML as plain text for search and the terminal: the one HTML renderer of feedsync,
/// for Mastodon's statuses and web feeds' items alike. Not a browser: good enough to read and
/// to search, and read as the WHATWG HTML standard tokenizes.
///
/// - Tags vanish. A tag starts with `<` and a letter (`</` and a letter for an end tag) and
///   ends at the first `>` outside a quoted attribute value; `<!--` starts a comment that ends
///   at `-->`; `<!…>`, `<?…>` and `</…>` are bogus comments. Any other `<` is text (`a <3 b`).
///   Markup cut off by the end of the text is dropped.
/// - `script` and `style` vanish with their contents, up to their end tag.
/// - `<br>` (and `</br>`, as the standard reads it) is a line break. The start and the end of
///   a block (`p`, `div`, `li`, `h1`–`h6`, `blockquote`, `pre`, `tr`, `ul`, `ol`, `hr`) make a
///   blank line, one however many blocks meet; `<li>` starts with `• `.
/// - Character references are decoded by ``HTMLEntities`` (`&nbsp;` is U+00A0, `&#150;` is `–`).
/// - CR LF and a lone CR are LF; a NUL is dropped (as the standard's input stream and tree
///   builder do), so no NUL is ever stored.
/// - White space: see ``Options/WhiteSpace``. The text is trimmed of White_Space at both ends.
///
/// It works on the UTF-8 bytes in one pass: every item of every page goes through it, and
/// walking `Character`s cost a tenth of a cold sync's CPU. The text is at most the length of
/// the HTML plus a fifth (a reference such as `&nGt;`, 5 bytes, stands for 6), and no input
/// makes it do more than a few passes over its bytes: nothing nests, nothing backtracks.
///
///     HTMLText.plainText("<p>Tom &amp; Jerry</p><p>fin</p>")    // "Tom & Jerry\n\nfin"
public enum HTMLText {
    /// How a backend's HTML is read.
    public struct Options: Hashable, Sendable {
        /// What becomes of the white space in the HTML's text.
        public enum WhiteSpace: Hashable, Sendable {
            /// As a browser lays out normal text (CSS `white-space: normal`): each run of ASCII
            /// white space (space, tab, LF, FF, CR), from the text or from a reference such as
            /// `&#10;`, is one space, none after a line break; each line is trimmed of spaces.
            /// U+00A0 and the other Unicode spaces are text, not collapsed.
            case collapse
            /// As written: spaces and line breaks stay where they are (`pre-wrap`).
            case preserve
        }

        public var whiteSpace: WhiteSpace

        /// - Parameter whiteSpace: ``WhiteSpace/collapse`` unless the backend's HTML keeps its
        ///   author's white space as written.
        public init(whiteSpace: WhiteSpace = .collapse) {
            self.whiteSpace = whiteSpace
        }
    }

    /// `html` rendered as plain text with white space collapsed, as ``HTMLText`` describes (a
    /// function to pass: `entry.html.map(HTMLText.plainText)`).
    public static func plainText(_ html: String) -> String {
        plainText(html, Options())
    }

    /// `html` rendered as plain text, as ``HTMLText`` describes.
    public static func plainText(_ html: String, _ options: Options) -> String {
        var html = html
        return html.withUTF8 { input in
            guard !input.isEmpty else { return "" }
            return String(unsafeUninitializedCapacity: input.count + input.count / 5 + 8) { output in
                var renderer = HTMLTextRenderer(input: input, output: output, collapses: options.whiteSpace == .collapse)
                renderer.render()
                return renderer.finish()
            }
        }
    }

    /// Escapes text for use inside HTML: `&`, `<`, `>` and `"` as references.
    public static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") || $0 == UInt8(ascii: "\"") }) else {
            return text
        }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Whether `scalar` is Unicode White_Space (what `CharacterSet.whitespacesAndNewlines` is
    /// documented to hold): what plain text is trimmed of at its ends.
    public static func isWhiteSpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000: return true
        default: return false
        }
    }

    /// White_Space without the line breaks (LF, VT, FF, CR, NEL, U+2028, U+2029): what a line
    /// of collapsed text is trimmed of at its ends.
    static func isLineSpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A...0x0D, 0x85, 0x2028, 0x2029: return false
        default: return isWhiteSpace(scalar)
        }
    }
}
