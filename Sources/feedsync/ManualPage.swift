import App
import Foundation

/// An mdoc(7) page being written: the macros the three manual pages use, with the text between
/// them escaped so that no sentence of a help string can be read as a request.
struct ManualPage {
    private(set) var lines: [String]

    /// Starts a page: `.Dd`, `.Dt`, `.Os` and its NAME section.
    init(name: String, section: Int, description: String) {
        lines = [".Dd \(manualDate)", ".Dt \(name.uppercased()) \(section)", ".Os", ".Sh NAME", ".Nm \(name)", ".Nd \(Self.escape(description))"]
    }

    var text: String { lines.joined(separator: "\n") + "\n" }

    mutating func macro(_ line: String) { lines.append(line) }

    mutating func section(_ title: String) { lines.append(".Sh \(title.uppercased())") }

    /// A subsection; a title that ends in a delimiter (`feeds[]`) ends in `\&`, so mdoc keeps it as text.
    mutating func subsection(_ title: String) {
        lines.append(".Ss \(Self.escape(title))" + (title.last.map { ".,:;)]?!".contains($0) } == true ? "\\&" : ""))
    }

    /// A paragraph of running text, one sentence a line as mdoc asks.
    mutating func paragraph(_ text: String) {
        if lines.last.map({ !$0.hasPrefix(".Sh") && !$0.hasPrefix(".Ss") }) ?? false { lines.append(".Pp") }
        lines += Self.sentences(text).flatMap(Self.wrapped).map(Self.escape)
    }

    /// A tagged list: each item's head (already mdoc macros) and its text.
    mutating func list(_ items: [(head: String, text: String)], width: String = "indent") {
        guard !items.isEmpty else { return }
        lines.append(".Bl -tag -width \(width)")
        for item in items {
            lines.append(".It \(item.head)")
            lines += Self.sentences(item.text).flatMap(Self.wrapped).map(Self.escape)
        }
        lines.append(".El")
    }

    /// A literal block (a config example), indented.
    mutating func literal(_ text: String) {
        lines.append(".Bd -literal -offset indent")
        lines += text.split(separator: "\n", omittingEmptySubsequences: false).map { Self.escape(String($0)) }
        lines.append(".Ed")
    }

    /// An option as an `.It` head: `Fl \-config Ar PATH`.
    static func head(_ option: CommandLineOptions.Spec) -> String {
        "Fl \(flag(option.name))" + (option.value.map { " Ar \(escape($0))" } ?? "")
    }

    /// `--config` as the argument of `Fl`: the first dash is the macro's, the second escaped.
    static func flag(_ name: String) -> String {
        "\\" + String(name.dropFirst()).replacingOccurrences(of: "\\", with: "\\e")
    }

    /// A synopsis as help writes it (`pull [--config PATH] [--full [--force-delete]]`) as mdoc
    /// lines: `[` `]` become `.Oo` `.Oc`, an option `.Fl` (with the value that follows it, `Ar`),
    /// a word in capitals `.Ar`, any other `.Cm`, and `|` ends the line before it.
    static func synopsis(_ text: String) -> [String] {
        var lines: [String] = []
        for token in text.replacingOccurrences(of: "[", with: " [ ").replacingOccurrences(of: "]", with: " ] ").split(separator: " ") {
            let word = String(token)
            let isValue = word == word.uppercased() && word.contains(where: \.isLetter)
            switch word {
            case "[": lines.append(".Oo")
            case "]": lines.append(".Oc")
            case "|": if !lines.isEmpty { lines[lines.count - 1] += " |" }
            default:
                if word.hasPrefix("--") {
                    lines.append(".Fl \(flag(word))")
                } else if isValue, let last = lines.last, last.hasPrefix(".Fl "), !last.contains(" Ar ") {
                    lines[lines.count - 1] += " Ar \(escape(word))"
                } else {
                    lines.append((isValue ? ".Ar " : ".Cm ") + escape(word))
                }
            }
        }
        return lines
    }

    /// `text` wrapped at word boundaries into lines of at most 80 bytes once escaped (each `-`
    /// and `\\` takes two); a longer word stays whole.
    static func wrapped(_ text: String) -> [String] {
        var lines: [String] = []
        var current = ""
        for word in text.split(separator: " ") {
            if !current.isEmpty, escape(current).utf8.count + 1 + escape(String(word)).utf8.count > 80 {
                lines.append(current)
                current = ""
            }
            current += (current.isEmpty ? "" : " ") + word
        }
        if !current.isEmpty { lines.append(current) }
        return lines
    }

    /// Text safe on a line of its own: backslashes escaped, `-` as the minus an option needs,
    /// anything past ASCII as `\[uXXXX]`, and a line that would begin with a control character
    /// (`.` or `'`) starts with the zero-width `\&`.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\e"
            case "-": escaped += "\\-"
            case _ where scalar.value > 0x7E: escaped += "\\[u" + String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4) + "]"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped.hasPrefix(".") || escaped.hasPrefix("'") ? "\\&" + escaped : escaped
    }

    /// The sentences of `text`, each on its line (mdoc's rule: a new sentence starts a new line).
    static func sentences(_ text: String) -> [String] {
        var result: [String] = []
        var current = ""
        let characters = Array(text)
        for (index, character) in characters.enumerated() {
            if character == "\n" {
                if !current.isEmpty { result.append(current) }
                current = ""
                continue
            }
            if character == " ", current.last.map({ ".?!".contains($0) }) == true, index + 1 < characters.count,
               characters[index + 1].isUppercase || characters[index + 1] == "`" {
                result.append(current)
                current = ""
                continue
            }
            current.append(character)
        }
        if !current.isEmpty { result.append(current) }
        return result.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

private extension String {
    /// The string with zeros before it, up to `width` characters.
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
