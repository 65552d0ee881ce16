import Foundation
import IntegrationKit
import Testing

/// The one comparison every credential passes before it travels, from RFC 6454's rules (§4: the
/// scheme and host lower-cased, the port made explicit; §5: equal when all three are).
@Suite struct OriginTests {
    func origin(_ text: String) throws -> Origin {
        let url = try #require(URL(string: text), "\(text)")
        return try #require(Origin(url), "\(text)")
    }

    func admitted(_ from: String, _ to: String, subdomains: Bool = false) throws -> Bool {
        let url = try #require(URL(string: to), "\(to)")
        return try origin(from).admits(url, subdomains: subdomains)
    }

    @Test func theSameServerSpelledAnotherWayIsTheSameOrigin() throws {
        let same: [(String, String, String)] = [
            ("https://example.social", "https://example.social:443/api/v1", "the default port made explicit"),
            ("http://example.social", "http://example.social:80", "http's default port"),
            ("https://example.social:0443", "https://example.social", "a port with a leading zero"),
            ("HTTPS://EXAMPLE.Social/a", "https://example.social/b?c#d", "scheme and host without case; path, query and fragment aside"),
            ("https://user:pw@example.social", "https://example.social", "user information aside"),
            ("https://ex%61mple.social", "https://example.social", "a percent-escape in the host undone"),
            ("https://bücher.example", "https://xn--bcher-kva.example", "an internationalized name and its A-label"),
            ("http://[::1]:8080", "http://[0:0:0:0:0:0:0:1]:8080", "one IPv6 address, two spellings"),
            ("http://[2001:DB8::1]", "http://[2001:db8:0::1]:80", "IPv6 without case and with its zeros shortened"),
            ("http://[::ffff:127.0.0.1]", "http://[::ffff:7f00:1]", "a mapped IPv4 address, two IPv6 spellings"),
        ]
        for (a, b, why) in same {
            #expect(try origin(a) == origin(b), "\(why): \(a) \(b)")
            #expect(try admitted(a, b) && admitted(b, a), "\(why): \(a) \(b)")
        }
    }

    @Test func anotherSchemeHostOrPortIsAnotherOrigin() throws {
        let other: [(String, String, String)] = [
            ("https://example.social", "http://example.social", "down to plain http"),
            ("http://example.social", "https://example.social", "up to https: another port too"),
            ("http://example.social:443", "https://example.social:443", "another scheme on the same port"),
            ("https://example.social", "https://example.social:8443", "another port"),
            ("http://127.0.0.1:4000", "http://127.0.0.1:4001", "another port on loopback"),
            ("https://example.social", "https://example.social.", "a trailing dot: resolvers may read it differently"),
            ("https://example.social", "https://streaming.example.social", "a subdomain, unless asked for"),
            ("https://example.social", "https://example.social.evil.example", "a name that only starts the same"),
            ("https://example.social", "https://notexample.social", "a name that only ends the same"),
            ("http://127.0.0.1", "http://2130706433", "an IPv4 address as one number"),
            ("http://127.0.0.1", "http://127.1", "an IPv4 address shortened"),
            ("http://127.0.0.1", "http://[::ffff:127.0.0.1]", "an IPv4 address mapped into IPv6"),
            ("http://127.0.0.1", "http://localhost", "a name for the same address"),
            ("http://[fe80::1%25eth0]", "http://[fe80::1%25eth1]", "another zone"),
        ]
        for (a, b, why) in other {
            #expect(try origin(a) != origin(b), "\(why): \(a) \(b)")
            #expect(try !admitted(a, b) && !admitted(b, a), "\(why): \(a) \(b)")
        }
    }

    @Test func onlyHTTPAndHTTPSURLsWithAHostHaveAnOrigin() throws {
        for text in ["ftp://example.social", "file:///etc/passwd", "data:text/plain,x", "javascript:alert(1)", "wss://example.social",
                     "mailto:a@example.social", "/relative/path", "https://"] {
            #expect(URL(string: text).flatMap(Origin.init) == nil, "\(text)")
            if let url = URL(string: text) { #expect(try !origin("https://example.social").admits(url), "\(text)") }
        }
    }

    @Test func aSubdomainIsAdmittedOnlyWhenAskedOnTheSameSchemeAndPort() throws {
        let table: [(String, String, Bool)] = [
            ("https://example.social", "https://streaming.example.social", true),
            ("https://example.social", "https://a.b.example.social:443", true),
            ("https://example.social", "https://streaming.example.social:4000", false),
            ("https://example.social", "http://streaming.example.social", false),
            ("https://example.social:8443", "https://streaming.example.social:8443", true),
            ("https://example.social", "https://streamingexample.social", false),
            ("https://example.social", "https://example.social.evil.example", false),
            ("http://127.0.0.1", "http://1.127.0.0.1", false),    // an address has no subdomains
        ]
        for (from, to, allowed) in table {
            #expect(try admitted(from, to, subdomains: true) == allowed, "\(from) → \(to)")
        }
    }

    @Test func anOriginShowsItsDefaultPortOnlyWhenItIsNotTheDefault() throws {
        #expect(try origin("https://Example.Social:443/x").description == "https://example.social")
        #expect(try origin("http://example.social:8080").description == "http://example.social:8080")
        #expect(try origin("http://[0:0::1]:80").description == "http://[::1]")
        #expect(try origin("https://example.social").gateKey == "example.social:443")
    }
}
