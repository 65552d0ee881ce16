import Foundation
import Testing
@testable import WebFeed

/// The one spelling `feedsync add` compares URLs by: RFC 3986's normalizations that cannot change
/// what a server answers (§6.2.2, §6.2.3, §5.2.4), and none that could.
@Suite struct NormalizedURLTests {
    @Test(arguments: [
        // §6.2.2.1 case: scheme and host, never the path.
        ("HTTP://Example.COM/Feed.xml", "http://example.com/Feed.xml"),
        ("hTTpS://WWW.example.org/", "https://www.example.org/"),
        // §6.2.3 scheme-based: default ports, an empty path.
        ("http://example.com:80/feed", "http://example.com/feed"),
        ("https://example.com:443/feed", "https://example.com/feed"),
        ("https://example.com:80/feed", "https://example.com:80/feed"),
        ("http://example.com:8080", "http://example.com:8080/"),
        ("http://example.com", "http://example.com/"),
        ("http://example.com?x=1", "http://example.com/?x=1"),
        // The fragment never reaches the server.
        ("http://example.com/blog/#comments", "http://example.com/blog/"),
        ("http://example.com#", "http://example.com/"),
        // §6.2.2.2 percent-encoding: upper-case escapes, unreserved characters decoded.
        ("http://example.com/%7euser/%2fx", "http://example.com/~user/%2Fx"),
        ("http://example.com/a%2db%5F%41", "http://example.com/a-b_A"),
        ("http://example.com/?q=%3d%7e", "http://example.com/?q=%3D~"),
        // §5.2.4 dot segments.
        ("http://example.com/a/./b/../c", "http://example.com/a/c"),
        ("http://example.com/a/b/..", "http://example.com/a/"),
        ("http://example.com/../../x", "http://example.com/x"),
        ("http://example.com/a/%2E%2E/b", "http://example.com/b"),
        // What stays: a trailing slash of a non-empty path, the query's order, user info.
        ("http://example.com/blog", "http://example.com/blog"),
        ("http://example.com/blog/", "http://example.com/blog/"),
        ("http://example.com/?b=2&a=1", "http://example.com/?b=2&a=1"),
        ("http://me@example.com/", "http://me@example.com/"),
    ])
    func normalizes(_ text: String, _ expected: String) throws {
        #expect(try #require(NormalizedURL(string: text)).description == expected)
    }

    @Test(arguments: ["ftp://example.com/feed", "mailto:me@example.com", "/relative/path", "http:///nohost", "feed.xml"])
    func isOnlyForAbsoluteHTTPURLs(_ text: String) {
        #expect(NormalizedURL(string: text) == nil)
    }

    @Test func spellingsOfOneAddressAreEqualAndOthersAreNot() throws {
        let spellings = ["http://Example.com:80/site/3/", "http://example.com/site/./3/#top", "HTTP://EXAMPLE.COM/site/%33/",
                         "http://example.com/site/x/../3/"]
        #expect(Set(spellings.compactMap(NormalizedURL.init(string:))).count == 1)
        let others = ["http://example.com/site/3", "https://example.com/site/3/", "http://example.com:8080/site/3/",
                      "http://example.com/Site/3/", "http://example.com/site/3/?", "http://www.example.com/site/3/"]
        #expect(Set(others.compactMap(NormalizedURL.init(string:))).count == others.count)
        #expect(!others.compactMap(NormalizedURL.init(string:)).contains(NormalizedURL(string: spellings[0])!))
    }
}
