import Foundation
@testable import IntegrationKit
import Testing

/// The one entity table against the standard's list (as Python's `html.entities.html5` holds
/// it), numeric references against the standard's windows-1252 table (as Python's
/// `html._invalid_charrefs` holds it), and the attribute rule.
@Suite struct HTMLEntitiesTests {
    /// What Python's standard library makes of `script`'s expression, as JSON.
    func python<T: Decodable>(_ expression: String, as type: T.Type) throws -> T {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import html, html.entities, json, sys; json.dump(\(expression), sys.stdout)"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return try JSONDecoder().decode(T.self, from: data)
    }

    @Test func theTableIsTheStandardsList() throws {
        let standard = try python("html.entities.html5", as: [String: String].self)
        let ours = HTMLEntities.NamedTable.shared.entries
        #expect(ours.count == standard.count && ours.count == 2_231)
        #expect(ours.filter { !$0.name.hasSuffix(";") }.count == 106)
        for (name, value) in ours {
            let text = String(String.UnicodeScalarView([value.first] + (value.second.map { [$0] } ?? [])))
            #expect(standard[name] == text, "\(name)")
            // The renderer's buffer holds the HTML's length plus a fifth: no reference may grow more.
            #expect(text.utf8.count <= (name.utf8.count + 1) * 6 / 5, "\(name)")
        }
        #expect(ours.map(\.name) == ours.map(\.name).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }

    @Test func numbersAreReadAsTheStandardSays() throws {
        let windows1252 = try python("{k: v for k, v in html._invalid_charrefs.items() if 0x80 <= k <= 0x9F}", as: [String: String].self)
        for number in UInt32(0x80)...0x9F {
            #expect(String(HTMLEntities.scalar(forNumber: number)) == windows1252["\(number)"], "\(number)")
        }
        let cases: [(UInt32, Unicode.Scalar)] = [
            (0, "\u{FFFD}"), (1, "\u{1}"), (0x0D, "\r"), (0x7F, "\u{7F}"), (0xA0, "\u{A0}"), (0xD7FF, "\u{D7FF}"), (0xD800, "\u{FFFD}"),
            (0xDFFF, "\u{FFFD}"), (0xE000, "\u{E000}"), (0xFFFF, "\u{FFFF}"), (0x10FFFF, "\u{10FFFF}"), (0x110000, "\u{FFFD}"), (.max, "\u{FFFD}"),
        ]
        for (number, scalar) in cases { #expect(HTMLEntities.scalar(forNumber: number) == scalar, "\(number)") }
    }

    /// In an attribute value, a legacy name without `;` followed by `=` or a letter or digit is
    /// text: a URL's query keeps its `&copy=2`.
    @Test func attributeValuesKeepWhatLooksLikeAQuery() {
        let cases = [
            ("/feed?a=1&amp;b=2", "/feed?a=1&b=2"), ("?x&copy=2&not1&amp", "?x&copy=2&not1&"), ("&copy;&copy &copy", "©© ©"),
            ("&#38;&#x26&quot;&apos;", "&&\"'"), ("a&b", "a&b"), ("&", "&"), ("&nGt;", "\u{226B}\u{20D2}"),
        ]
        for (value, decoded) in cases { #expect(HTMLEntities.decode(value, inAttribute: true) == decoded, "\(value)") }
        #expect(HTMLEntities.decode("?x&copy=2") == "?x©=2", "in text the rule does not apply")
        #expect(HTMLEntities.decode("plain") == "plain")
    }

    @Test func aNameAloneIsLookedUpWithItsSemicolon() {
        #expect(HTMLEntities.character(named: "eacute") == "é" && HTMLEntities.character(named: "nbsp") == "\u{A0}")
        #expect(HTMLEntities.character(named: "NotEqualTilde") == "\u{2242}\u{338}")
        #expect(HTMLEntities.character(named: "bogus") == nil && HTMLEntities.character(named: "") == nil)
        #expect(HTMLEntities.character(named: "AMP") == "&" && HTMLEntities.character(named: "Amp") == nil)
    }
}
