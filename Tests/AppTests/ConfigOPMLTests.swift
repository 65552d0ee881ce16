@testable import App
import Core
import Foundation
import Testing

/// `opml` entries of a config, expanded the way the executables expand them.
@Suite struct ConfigOPMLTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-opml-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    /// Each feed's name and `posts.url`, in config order, for this OPML body and these entries.
    func feeds(_ outlines: String, entries: String = #"{"name": "blogs", "opml": "subs.opml"}"#) throws -> [String: String] {
        try Data("<opml version=\"2.0\"><body>\(outlines)</body></opml>".utf8).write(to: folder.appendingPathComponent("subs.opml"))
        let url = folder.appendingPathComponent("feedsync.json")
        try Data(#"{"feeds": [\#(entries)]}"#.utf8).write(to: url)
        let config = try Config.load(from: url, displayName: "feedsync.json", environment: [:])
        return Dictionary(uniqueKeysWithValues: try config.feeds.map { ($0.name, try $0.posts.string("url") ?? "") })
    }

    @Test func aSiteOnlyOutlineNeverTakesTheNameOfAFeedWithAnXmlUrl() throws {
        let before = try feeds(#"<outline text="Daring Fireball" xmlUrl="https://daringfireball.net/feeds/main"/>"#)
        #expect(before == ["blogs.daring-fireball": "https://daringfireball.net/feeds/main"])
        // An htmlUrl-only outline of the same title, earlier in the file, comes after it in naming.
        let after = try feeds("""
            <outline text="Daring Fireball" htmlUrl="https://daringfireball.net/"/>
            <outline text="Daring Fireball" xmlUrl="https://daringfireball.net/feeds/main"/>
            """)
        #expect(after["blogs.daring-fireball"] == "https://daringfireball.net/feeds/main", "\(after)")
        #expect(after["blogs.daring-fireball-2"] == "https://daringfireball.net/", "\(after)")
    }

    @Test func aSiteOnlyOutlineIsNamedAfterEveryEntryOfTheConfigToo() throws {
        // Without a prefix, the site's slug is a later entry's name: the entry keeps it.
        let feeds = try feeds(#"<outline text="Home" htmlUrl="https://home.example/"/>"#, entries: """
            {"opml": "subs.opml"},
            {"name": "home", "posts": {"integration": "webfeed", "url": "https://home.example/feed.xml"}}
            """)
        #expect(feeds == ["home": "https://home.example/feed.xml", "home-2": "https://home.example/"])
    }
}
