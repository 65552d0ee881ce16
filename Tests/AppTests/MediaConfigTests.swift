@testable import App
import Core
import Foundation
import Testing

/// The `"media"` sections as the config reads them, and the archive's metrics.
@Suite struct MediaConfigTests {
    func load(_ text: String) throws -> Config {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-media-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent("feedsync.json")
        try Data(text.utf8).write(to: url)
        return try Config.load(from: url, displayName: "feedsync.json", environment: [:])
    }

    func feed(_ name: String, _ extra: String = "") -> String {
        #"{"name": "\#(name)", \#(extra) "posts": {"integration": "webfeed", "url": "https://example.org/\#(name).xml"}}"#
    }

    @Test(arguments: [("20GB", Int64(20_000_000_000)), ("500MB", 500_000_000), ("100KB", 100_000), ("2GiB", 2_147_483_648),
                      ("1.5 GB", 1_500_000_000), ("4096", 4096)])
    func sizesRead(_ text: String, _ bytes: Int64) {
        #expect(Config.parseSize(text) == bytes)
    }

    @Test(arguments: ["", "GB", "20 furlongs", "-1GB", "0", "2PB"])
    func badSizesAreRefused(_ text: String) throws {
        #expect(throws: ConfigError.self) { try load(#"{"feeds": [], "media": {"maxBytes": "\#(text)"}}"#) }
    }

    @Test func offWithoutASectionAndAFeedsOwnSectionOrFalseOverTheGlobalOne() throws {
        #expect(try load(#"{"feeds": [\#(feed("a"))]}"#).media == nil)
        let config = try load(#"""
            {"feeds": [\#(feed("a")), \#(feed("b", #""media": {"kinds": ["avatar"], "maxItemBytes": "1MB"},"#)), \#(feed("c", #""media": false,"#))],
             "media": {"path": "archive", "maxBytes": "20GB", "kinds": ["image", "video"], "concurrency": 8}}
            """#)
        let media = try #require(config.media)
        #expect(media.folder.lastPathComponent == "archive" && media.maxBytes == 20_000_000_000 && media.concurrency == 8)
        #expect(media.feeds["a"]?.kinds == [.image, .video] && media.feeds["a"]?.limits.maxItemBytes == 500_000_000)
        #expect(media.feeds["b"]?.kinds == [.avatar] && media.feeds["b"]?.limits.maxItemBytes == 1_000_000)
        #expect(media.feeds["c"] == nil)
        // A feed's own section turns the archive on for it alone.
        let alone = try #require(try load(#"{"feeds": [\#(feed("a")), \#(feed("b", #""media": {},"#))]}"#).media)
        #expect(Set(alone.feeds.keys) == ["b"] && alone.folder.lastPathComponent == "media" && alone.maxBytes == nil)
        #expect(throws: ConfigError.self) { try load(#"{"feeds": [\#(feed("a", #""media": {"path": "x"},"#))]}"#) }
        #expect(throws: ConfigError.self) { try load(#"{"feeds": [\#(feed("a", #""media": true,"#))]}"#) }
    }

    @Test func metricsShowTheArchiveOnceItHasRun() {
        let registry = MetricsRegistry(version: "test")
        #expect(!registry.renderedText().contains("feedsync_media"))
        registry.updateMedia(MediaSummary(counts: [.fetched: 3, .refused: 1], bytes: 4096, files: 2))
        let text = registry.renderedText()
        #expect(text.contains("feedsync_media_items{status=\"fetched\"} 3\n") && text.contains("feedsync_media_items{status=\"pending\"} 0\n"))
        #expect(text.contains("feedsync_media_files 2\n") && text.contains("feedsync_media_bytes 4096\n"))
    }
}
