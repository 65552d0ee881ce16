import Foundation

/// Renders HTML as plain text for search and the terminal: block ends become line breaks,
/// scripts and styles vanish with their content, other tags vanish, and character references
/// are decoded. Not a browser: good enough to read and to search.
enum HTMLText {
    static func plainText(_ html: String) -> String {
        var text = ""
        text.reserveCapacity(html.utf8.count)
        var index = html.startIndex
        var skippingUntil: String?
        while index < html.endIndex {
            let character = html[index]
            if character == "<", let close = html[index...].firstIndex(of: ">") {
                let inside = html[html.index(after: index)..<close]
                let name = inside.prefix(while: { $0.isLetter || $0.isNumber || $0 == "/" || $0 == "!" }).lowercased()
                index = html.index(after: close)
                if let until = skippingUntil {
                    if name == until { skippingUntil = nil }
                    continue
                }
                switch name {
                case "script", "style": skippingUntil = "/" + name
                case "br", "br/": text += "\n"
                case "/p", "/div", "/li", "/h1", "/h2", "/h3", "/h4", "/h5", "/h6", "/blockquote", "/pre", "/tr", "hr", "/ul", "/ol":
                    if !text.hasSuffix("\n\n") { text += text.hasSuffix("\n") ? "\n" : "\n\n" }
                case "li": text += "• "
                default: break
                }
                continue
            }
            if skippingUntil != nil { index = html.index(after: index); continue }
            if character == "&", let semicolon = html[index...].prefix(12).firstIndex(of: ";"),
               let decoded = entity(html[html.index(after: index)..<semicolon]) {
                text.unicodeScalars.append(decoded)
                index = html.index(after: semicolon)
            } else if character.isWhitespace {
                // HTML collapses runs of whitespace; the block breaks above are the only line breaks.
                if let last = text.last, !last.isWhitespace { text += " " }
                index = html.index(after: index)
            } else {
                text.append(character)
                index = html.index(after: index)
            }
        }
        // Trailing spaces before a line break read as nothing.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        return lines.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Escapes text for use inside HTML.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }

    private static func entity(_ name: Substring) -> Unicode.Scalar? {
        switch name {
        case "amp": return "&"
        case "lt": return "<"
        case "gt": return ">"
        case "quot": return "\""
        case "apos": return "'"
        case "nbsp": return " "
        case "mdash": return "\u{2014}"
        case "ndash": return "\u{2013}"
        case "hellip": return "\u{2026}"
        case "rsquo": return "\u{2019}"
        case "lsquo": return "\u{2018}"
        case "rdquo": return "\u{201D}"
        case "ldquo": return "\u{201C}"
        case "copy": return "\u{00A9}"
        default:
            guard name.hasPrefix("#") else { return nil }
            let digits = name.dropFirst()
            let value = digits.first == "x" || digits.first == "X" ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
            guard let value, value != 0 else { return nil }
            return Unicode.Scalar(value)
        }
    }
}
