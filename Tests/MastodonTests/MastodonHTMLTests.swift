import Testing
@testable import Mastodon

/// What a status's HTML becomes as text: script and style are code, never text; no NUL is kept.
@Suite struct MastodonHTMLTests {
    static let cases: [(String, String)] = [
        ("<p>before</p><script>alert(1)</script><p>after</p>", "before\n\nafter"),
        ("a<SCRIPT type=\"text/javascript\">if (a<b && c>d) { x('</p>') }</ScRiPt>b", "ab"),
        ("a<style>p { color: red }</style>b", "ab"),
        ("a<style\n media=\"all\">p{}</style >b", "ab"),
        ("a<script>never closed <p>still code</p>", "a"),
        ("a<scripts>kept</scripts>b", "akeptb"),                 // another element, not script
        ("a<stylesheet>kept</stylesheet>b", "akeptb"),
        ("x&#0;y", "x\u{FFFD}y"), ("x&#x0;y", "x\u{FFFD}y"), ("x&#xD800;y", "x\u{FFFD}y"), ("x&#1114112;y", "x\u{FFFD}y"),
        ("x&#65;y", "xAy"), ("x&#zz;y", "x&#zz;y"),
    ]

    @Test(arguments: cases) func htmlCase(_ html: String, _ text: String) {
        #expect(MastodonHTML.plainText(html) == text, "\(html)")
        #expect(!MastodonHTML.plainText(html).unicodeScalars.contains("\u{0}"))
    }
}
