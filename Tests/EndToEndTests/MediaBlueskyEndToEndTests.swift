import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// A Bluesky video (`app.bsky.embed.video#view`) is archived as one file: its HLS playlist, as
/// the fake Bluesky service points it at the media fixture (`--video-base`), read as RFC 8216
/// says: the multivariant playlist's best variant (720p), whose three segments are joined.
@Suite struct MediaBlueskyEndToEndTests {
    @Test func aBlueskyVideosBestHLSVariantIsJoinedIntoOneFile() async throws {
        let media = try ReferenceServer(script: "Fixtures/media/server.py", arguments: [])
        let password = "app-pass-SECRET-1"
        let bluesky = try ReferenceServer(script: "Fixtures/bluesky/server.py",
                                          arguments: ["--posts", "40", "--password", password, "--video-base", media.baseURL])
        let scratch = try Scratch()
        let config = scratch.folder.appendingPathComponent("feedsync.json")
        // Videos only: the fixture's images are on a CDN name that is not on this machine.
        try Data("""
            {"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
             "feeds": [{"name": "sky", "posts": {"integration": "bluesky", "service": "\(bluesky.baseURL)",
                        "identifier": "me.test", "appPasswordEnv": "BLUESKY_APP_PASSWORD", "timeline": "home"}}],
             "media": {"path": "media", "kinds": ["video"]}}
            """.utf8).write(to: config)
        let environment = ["BLUESKY_APP_PASSWORD": password]
        let pull = try await feedsync(["pull", "--config", config.path], environment: environment)
        #expect(pull.status == 0, "\(pull.stderr)")
        let playlists = try await sqlite(scratch.database, "SELECT stream_url FROM videos WHERE feed = 'sky' ORDER BY stream_url")
            .split(separator: "\n").map(String.init)
        try #require(!playlists.isEmpty, "the seeded timeline has videos")
        #expect(playlists.allSatisfy { $0.hasPrefix(media.baseURL + "/watch/") && $0.hasSuffix("/playlist.m3u8") }, "\(playlists)")

        let fetch = try await feedsync(["media", "fetch", "--config", config.path], environment: environment)
        #expect(fetch.status == 0 && fetch.stdout.contains("fetched \(playlists.count) "), "\(fetch.stdout) \(fetch.stderr)")
        let rows = try await sqlite(scratch.database, "SELECT status || '|' || bytes || '|' || kind FROM media ORDER BY url")
        #expect(rows.split(separator: "\n").map(String.init) == Array(repeating: "fetched|12000|video", count: playlists.count), "\(rows)")
        let requests = try await media.control("GET", "/_control/stats")["requests"] as? [String: Int] ?? [:]
        for playlist in playlists {
            let folder = String(playlist.dropFirst(media.baseURL.count).dropLast("playlist.m3u8".count))
            #expect(requests[folder + "720p/video.m3u8"] == 1 && requests[folder + "360p/video.m3u8"] == nil, "\(requests)")
            #expect((0..<3).allSatisfy { requests[folder + "720p/video\($0).ts"] == 1 }, "\(requests)")
        }
        // The joined file is the three segments in order, byte for byte, under its SHA-256.
        let first = try #require(playlists.first)
        let folder = String(first.dropFirst(media.baseURL.count).dropLast("playlist.m3u8".count))
        var joined = Data()
        for index in 0..<3 {
            let (data, _) = try await URLSession.shared.data(from: URL(string: media.baseURL + folder + "720p/video\(index).ts")!)
            joined.append(data)
        }
        let path = try await sqlite(scratch.database, "SELECT path FROM media_files WHERE url = '\(first)'")
        let stored = try Data(contentsOf: scratch.folder.appendingPathComponent("media").appendingPathComponent(path))
        #expect(stored == joined)
    }
}
