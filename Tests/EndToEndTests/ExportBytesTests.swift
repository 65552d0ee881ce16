import Foundation
import Testing

/// `export`'s bytes are pinned: the overlapped reading, encoding and writing of pages (issue 40)
/// must write exactly what one page after another did, across pages and feeds, in both formats.
@Suite(.endToEnd) struct ExportBytesTests {
    /// Posts per feed: each feed is two of the export's pages (2,000 posts a page).
    static let posts = 2_500

    /// SHA-256 of the export of two feeds of the reference server's 2,500 posts (seed 1), written by
    /// feedsync before the pages overlapped (main at b7b5dd0).
    static let jsonLines = "21dc54118e29273739253593610d19628dfecaeb22d8eb6389835070a72b5952"
    static let csv = "65d560d34e6cfcc24d28007fdba121277dccc9ec2d132d574ff2dbee77e3db56"

    @Test func theExportOfSeveralPagesAndFeedsIsTheSameByteForByte() async throws {
        let server = try ReferenceServer(posts: Self.posts)
        defer { withExtendedLifetime(server) {} }
        let scratch = try Scratch()
        let catalog = repository.appendingPathComponent("Fixtures/videos/catalog.json").path
        let config = try scratch.writeConfig(baseURL: server.baseURL, pageSize: 500, extraFeeds: """
            , {"name": "more", "posts": {"integration": "httpapi", "baseURL": "\(server.baseURL)", "username": "demo",
                                         "passwordEnv": "FEEDSYNC_PASSWORD", "pageSize": 500},
               "videos": {"integration": "mockvideohost", "catalog": "\(catalog)"}}
            """)
        let pull = try await feedsync(["pull", "--config", config])
        #expect(pull.status == 0, "\(pull.stderr)")
        for (format, golden) in [("jsonl", Self.jsonLines), ("csv", Self.csv)] {
            let file = scratch.folder.appendingPathComponent("export.\(format)")
            let export = try await feedsync(["export", "--config", config, "--format", format, "--output", file.path], environment: [:])
            #expect(export.status == 0, "\(export.stderr)")
            if format == "jsonl" { #expect(try Data(contentsOf: file).split(separator: UInt8(ascii: "\n")).count == 2 * Self.posts) }
            let sum = try await run(URL(fileURLWithPath: "/usr/bin/env"), ["sha256sum", file.path])
            #expect(sum.stdout.split(separator: " ").first.map(String.init) == golden, "\(format) export changed")
        }
    }
}
