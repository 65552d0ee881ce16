import Foundation

/// Renders HTML as plain text for search and the terminal: block ends become line breaks,
/// scripts and styles vanish with their content, other tags vanish, and character references
/// are decoded. Not a browser: good enough to read and to search.
enum HTMLText {
    static func plainText(_ html: String) -> String {
        asciiPlainText(html) ?? generalPlainText(html)
    }

    /// ``plainText(_:)`` for markup that is all ASCII, byte by byte, with the same result; `nil`
    /// (take the general path) for other markup, or a reference that decodes to anything but
    /// printable ASCII. Walking `Character`s cost a tenth of a cold sync's CPU.
    static func asciiPlainText(_ html: String) -> String? {
        var html = html
        return html.withUTF8 { input -> String? in
            guard input.allSatisfy({ $0 < 0x80 }) else { return nil }
            func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
            func isNameByte(_ byte: UInt8) -> Bool {
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2F || byte == 0x21
            }
            var out: [UInt8] = []
            out.reserveCapacity(input.count)
            func breakBlock() {
                let count = out.count
                if count >= 2 && out[count - 1] == 0x0A && out[count - 2] == 0x0A { return }
                out.append(0x0A)
                if out.count < 2 || out[out.count - 2] != 0x0A { out.append(0x0A) }
            }
            var skippingUntil: String?
            var index = 0
            while index < input.count {
                let byte = input[index]
                if byte == UInt8(ascii: "<"), let close = input[(index + 1)...].firstIndex(of: UInt8(ascii: ">")) {
                    var end = index + 1
                    while end < close && isNameByte(input[end]) { end += 1 }
                    let name = String(decoding: input[(index + 1)..<end], as: UTF8.self).lowercased()
                    index = close + 1
                    if let until = skippingUntil {
                        if name == until { skippingUntil = nil }
                        continue
                    }
                    switch name {
                    case "script", "style": skippingUntil = "/" + name
                    case "br", "br/": out.append(0x0A)
                    case "/p", "/div", "/li", "/h1", "/h2", "/h3", "/h4", "/h5", "/h6", "/blockquote", "/pre", "/tr", "hr", "/ul", "/ol":
                        breakBlock()
                    case "li": out.append(contentsOf: "• ".utf8)
                    default: break
                    }
                    continue
                }
                if skippingUntil != nil { index += 1; continue }
                if byte == UInt8(ascii: "&"), let semicolon = input[index..<min(index + 12, input.count)].firstIndex(of: UInt8(ascii: ";")),
                   let decoded = entity(Substring(String(decoding: input[(index + 1)..<semicolon], as: UTF8.self))) {
                    guard (0x20...0x7E).contains(decoded.value) else { return nil }
                    out.append(UInt8(decoded.value))
                    index = semicolon + 1
                } else if isSpace(byte) {
                    if let last = out.last, !isSpace(last) { out.append(0x20) }
                    index += 1
                } else {
                    out.append(byte)
                    index += 1
                }
            }
            // Trailing spaces before a line break read as nothing; then the whole is trimmed.
            var lines = out.split(separator: 0x0A, omittingEmptySubsequences: false).map { line -> ArraySlice<UInt8> in
                guard let first = line.firstIndex(where: { $0 != 0x20 }), let last = line.lastIndex(where: { $0 != 0x20 }) else { return [] }
                return line[first...last]
            }
            while lines.first?.isEmpty == true { lines.removeFirst() }
            while lines.last?.isEmpty == true { lines.removeLast() }
            return String(decoding: Array(lines.joined(separator: [0x0A])), as: UTF8.self)
        }
    }

    /// The rendering for any markup, character by character.
    static func generalPlainText(_ html: String) -> String {
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
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(trimmingSpaces)
        return FeedText.trimmed(lines.joined(separator: "\n"))
    }

    /// `line` without leading and trailing spaces and tabs: `trimmingCharacters(in: .whitespaces)`
    /// (Unicode's space separators and the tab) without the trip through NSString.
    private static func trimmingSpaces(_ line: Substring) -> Substring {
        func isSpace(_ scalar: Unicode.Scalar) -> Bool { scalar != "\u{85}" && FeedText.isTrimmed(scalar) && !(0x0A...0x0D).contains(scalar.value) && scalar != "\u{2028}" && scalar != "\u{2029}" }
        let scalars = line.unicodeScalars
        guard let start = scalars.firstIndex(where: { !isSpace($0) }) else { return "" }
        let end = scalars.lastIndex(where: { !isSpace($0) })!
        return Substring(scalars[start...end])
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
            guard let value else { return nil }
            // As HTML reads them: NUL, a surrogate or a number past U+10FFFF is U+FFFD (no NUL is stored).
            return value == 0 ? "\u{FFFD}" : Unicode.Scalar(value) ?? "\u{FFFD}"
        }
    }
}
