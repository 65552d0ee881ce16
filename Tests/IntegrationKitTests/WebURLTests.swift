import Core
import Foundation
@testable import IntegrationKit
import ProcessTestSupport
import Testing

/// `WebURL` answers as Foundation's parse followed by the scheme and host checks, and its byte
/// check takes only texts Foundation keeps as they are: as text and as a `WebLink`.
@Suite struct WebURLTests {
    /// The check as it was written before the byte check: Foundation decides everything.
    static func oracle(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              url.host?.isEmpty == false else { return nil }
        return url
    }

    @Test(arguments: [
        "https://example.com/a/b?c=d&e=f#g", "HTTP://Example.COM", "http://1.2.3.4/",
        "https://example.com/%E2%9C%93", "https://example.com/a'b(c)*+,;=:@!$~_",
    ])
    func plainWebURLsAreTakenAsTheyAre(text: String) {
        #expect(WebURL.isPlainlyWeb(text))
        #expect(WebURL.text(text) == text)
        #expect(WebURL.link(text)?.absoluteString == text)
    }

    @Test(arguments: ["javascript:alert(1)", "file:///etc/passwd", "ftp://example.com/", "https://", "https:///path", "mailto:a@b.c",
                      "http:example.com", "//example.com/a", "data:text/html,hi"])
    func otherSchemesAndURLsWithoutAHostAreRefused(text: String) {
        #expect(WebURL.text(text) == nil)
        #expect(WebURL.link(text) == nil)
    }

    @Test func everyTextGetsFoundationsAnswer() {
        let schemes = ["http://", "https://", "HTTP://", "hTtPs://", "ftp://", "javascript:", "http:/", "http:", "", "https:///", "http\u{1A}//"]
        let hosts = ["example.com", "a", "EXAMPLE.org", "a-b.c", "1.2.3.4", "", "[::1]", "user@host", "host:8080", "host:99999",
                     "ex ample.com", "é.com", "xn--n3h.com", "-", ".", "a_b.com", "a%41.com"]
        let tokens = ["/", "?", "#", "%41", "%e2%9c%93", "%zz", "%4", "%", "é", "🙂", "a", "[", "]", " ", "\\", "\"", "<", "|", "^", "`", "{"]
        let safe = Array("abcXYZ019-._~!$&'()*+,;=:@/?")
        var random = SeededRandom(seed: 40)
        var (plain, other) = (0, 0)
        for _ in 0..<50_000 {
            var text = schemes[random.next(below: schemes.count)] + hosts[random.next(below: hosts.count)]
            for _ in 0..<random.next(below: 10) {
                // A character a URL may hold, any ASCII byte (controls included), or one of the tokens.
                switch random.next(below: 4) {
                case 0: text += String(UnicodeScalar(UInt8(random.next(below: 128))))
                case 1: text += tokens[random.next(below: tokens.count)]
                default: text += String(safe[random.next(below: safe.count)])
                }
            }
            let expected = Self.oracle(text)?.absoluteString
            #expect(WebURL.text(text) == expected, "\(text.debugDescription)")
            // A link keeps the text Foundation would, and parses back to Foundation's own URL.
            let link = WebURL.link(text)
            #expect(link?.absoluteString == expected, "\(text.debugDescription)")
            #expect(link?.url == Self.oracle(text), "\(text.debugDescription)")
            if WebURL.isPlainlyWeb(text) {
                plain += 1
                #expect(expected == text, "Foundation changed \(text.debugDescription)")
            } else {
                other += 1
            }
        }
        // Both paths are exercised.
        #expect(plain > 1_000 && other > 1_000, "\(plain) plain, \(other) decided by Foundation")
    }
}
