import Core
import Foundation

/// Parses an HTTP `Link` field (RFC 8288): `<https://…?max_id=1>; rel="next", <…>; rel="prev"`.
///
/// A URL sits between `<` and `>`, so commas inside it do not split link values; parameters
/// may be tokens or quoted strings; `rel` may hold several space-separated relation types.
public enum LinkHeader {
    /// The longest field accepted; Mastodon's are a few hundred bytes.
    public static let maxLength = 8 * 1024

    /// Why a `Link` field cannot be read, as a phrase.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    /// The links of a field by relation type (lower-cased); the first link of a type wins.
    ///
    /// - Parameter base: what relative references resolve against (the request's URL).
    /// - Throws: ``ParseError`` for a field that is too long or does not follow the grammar.
    public static func parse(_ field: String, base: URL? = nil) throws(ParseError) -> [String: URL] {
        guard field.utf8.count <= maxLength else {
            throw ParseError(reason: "the Link header is \(field.utf8.count) bytes, more than the \(maxLength) accepted")
        }
        let s = Array(field.unicodeScalars)
        var i = 0
        var links: [String: URL] = [:]
        func skipSpace() { while i < s.count, s[i] == " " || s[i] == "\t" { i += 1 } }
        func failure(_ what: String) -> ParseError {
            let near = String(String.UnicodeScalarView(s[min(i, s.count)..<min(i + 40, s.count)]))
            return ParseError(reason: "the Link header is malformed: \(what) at character \(i + 1)"
                              + (near.isEmpty ? "" : " (near \"\(Terminal.safe(near))\")"))
        }
        func token() -> String {
            let start = i
            while i < s.count, isTokenCharacter(s[i]) { i += 1 }
            return String(String.UnicodeScalarView(s[start..<i]))
        }
        while true {
            skipSpace()
            guard i < s.count else { break }
            if s[i] == "," { i += 1; continue }   // empty list elements are allowed
            guard s[i] == "<" else { throw failure("expected \"<\"") }
            let start = i + 1
            guard let close = s[start...].firstIndex(of: ">") else { throw failure("a \"<\" without \">\"") }
            // Trimmed of what `CharacterSet.whitespaces` holds (tab and the space separators), a
            // scalar at a time: through NSString, trimming was most of this parse's cost.
            var inner = s[start..<close]
            while let first = inner.first, isWhitespace(first) { inner.removeFirst() }
            while let last = inner.last, isWhitespace(last) { inner.removeLast() }
            let reference = String(String.UnicodeScalarView(inner))
            i = close + 1
            var relations: [String] = []
            while true {
                skipSpace()
                guard i < s.count, s[i] == ";" else { break }
                i += 1
                skipSpace()
                let name = token().lowercased()
                guard !name.isEmpty else { throw failure("expected a parameter name") }
                skipSpace()
                var value = ""
                if i < s.count, s[i] == "=" {
                    i += 1
                    skipSpace()
                    if i < s.count, s[i] == "\"" {
                        i += 1
                        var scalars = String.UnicodeScalarView()
                        while i < s.count, s[i] != "\"" {
                            if s[i] == "\\", i + 1 < s.count { i += 1 }
                            scalars.append(s[i])
                            i += 1
                        }
                        guard i < s.count else { throw failure("an unterminated quoted string") }
                        i += 1
                        value = String(scalars)
                    } else {
                        value = token()
                        guard !value.isEmpty else { throw failure("expected a parameter value") }
                    }
                }
                if name == "rel" && relations.isEmpty {
                    relations = value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map { $0.lowercased() }
                }
            }
            skipSpace()
            if i < s.count {
                guard s[i] == "," else { throw failure("expected \",\" or \";\"") }
                i += 1
            }
            // An absolute reference is one URL to parse; a relative one, two (itself and resolved).
            let url = hasScheme(inner) ? URL(string: reference) : URL(string: reference, relativeTo: base)?.absoluteURL
            guard let url, url.scheme != nil else {
                throw ParseError(reason: "the Link header holds \"\(Terminal.safe(reference, limit: 100))\", which is not a URL")
            }
            for relation in relations where links[relation] == nil { links[relation] = url }
        }
        return links
    }

    private static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator
    }

    /// Whether `reference` starts with an RFC 3986 scheme and its colon: `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"`.
    private static func hasScheme(_ reference: ArraySlice<Unicode.Scalar>) -> Bool {
        guard let first = reference.first, ("a"..."z").contains(first) || ("A"..."Z").contains(first) else { return false }
        for scalar in reference.dropFirst() {
            switch scalar {
            case ":": return true
            case "a"..."z", "A"..."Z", "0"..."9", "+", "-", ".": continue
            default: return false
            }
        }
        return false
    }

    /// RFC 9110's `tchar`.
    private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9": return true
        case "!", "#", "$", "%", "&", "'", "*", "+", "-", ".", "^", "_", "`", "|", "~": return true
        default: return false
        }
    }
}
