import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The media archive (docs/media.md) with the real binaries against the media fixture server
/// (Fixtures/media/server.py): fetched, stored once, resumed, kept after a delete at the source,
/// removed with a purge; and every bad input of issue 37 one log line and one row status.
@Suite struct MediaEndToEndTests {
    let server: ReferenceServer
    let scratch: Scratch

    init() throws {
        server = try ReferenceServer(script: "Fixtures/media/server.py", arguments: [])
        scratch = try Scratch()
    }

    var media: URL { scratch.folder.appendingPathComponent("media") }

    /// Publishes `items` (id and media paths on the fixture server; `.m3u8` as a video) as the feed.
    func publish(_ items: [(String, [String])]) async throws {
        let json = items.enumerated().map { index, item in
            let media = item.1.map { path -> String in
                let type = path.hasSuffix(".mp3") ? "audio/mpeg" : path.hasSuffix(".m3u8") ? "application/x-mpegURL" : "image/png"
                let length = path.hasSuffix("more.mp3") ? #", "length": 1000"# : ""
                let medium = path.hasSuffix(".m3u8") ? #", "medium": "video""# : ""
                return #"{"url": "\#(path)", "type": "\#(type)"\#(length)\#(medium)}"#
            }
            return #"{"id": "\#(item.0)", "at": \#(index * 100), "media": [\#(media.joined(separator: ", "))]}"#
        }
        try await server.control("POST", "/_control/feed", body: "[\(json.joined(separator: ", "))]")
    }

    func writeConfig(media keys: String = #"{"path": "media"}"#, feedKeys: String = "") throws -> String {
        let json = """
            {"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
             "feeds": [{"name": "f", "interval": "1h", \(feedKeys) "posts": {"integration": "webfeed", "url": "\(server.baseURL)/feed.xml"}}],
             "media": \(keys)}
            """
        let url = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: url)
        return url.path
    }

    /// `status|bytes` of the row of `path` on the fixture server.
    func row(_ path: String) async throws -> String {
        try await sqlite(scratch.database, "SELECT status || '|' || COALESCE(bytes, '') FROM media WHERE url = '\(server.baseURL)\(path)'")
    }

    /// Every file under the archive folder, relative to the scratch folder (`media/ab/cd/…`).
    func files() -> [String] {
        let enumerator = FileManager.default.enumerator(at: scratch.folder, includingPropertiesForKeys: [.isRegularFileKey])
        var found: [String] = []
        while let url = enumerator?.nextObject() as? URL {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
            let relative = String(url.standardizedFileURL.path.dropFirst(scratch.folder.standardizedFileURL.path.count + 1))
            if relative.hasPrefix("media/") { found.append(relative) }
        }
        return found.sorted()
    }

    @Test func mediaIsFetchedStoredOnceResumedKeptAfterADeleteAtTheSourceAndPurged() async throws {
        try await publish([("1", ["/m/img-1.png", "/m/same-a.png"]), ("2", ["/m/same-b.png", "/m/cut-1.mp3"]),
                           ("3", ["/m/gone-1.png", "/m/hls.m3u8"])])
        let config = try writeConfig()
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        let first = try await feedsync(["media", "fetch", "--config", config])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("fetched 5 "), "\(first.stdout)")
        // The first answer of cut-1.mp3 stops half way: its bytes wait under .partial/, no final name.
        #expect(try await row("/m/cut-1.mp3") == "failed|")
        #expect(first.stderr.components(separatedBy: "media not fetched").count == 2, "one line for the one item: \(first.stderr)")
        #expect(files().filter { $0.hasPrefix("media/.partial/") }.count == 1)

        let sentBefore = try await server.control("GET", "/_control/stats")["bytes"] as? Int ?? -1
        let second = try await feedsync(["media", "fetch", "--config", config])
        #expect(second.status == 0 && second.stdout.contains("fetched 1 (300000 bytes)"), "\(second.stdout)")
        #expect(try await row("/m/cut-1.mp3") == "fetched|300000")
        let stats = try await server.control("GET", "/_control/stats")
        #expect((stats["ranges"] as? [String]) == ["bytes=150000-"], "\(stats)")
        #expect((stats["bytes"] as? Int ?? 0) - sentBefore == 150_000, "only the missing half went over the wire")
        // The same bytes under two addresses are one file; the HLS video's best variant is joined (3 × 4000 bytes).
        #expect(try await sqlite(scratch.database, "SELECT COUNT(DISTINCT digest) FROM media WHERE url LIKE '%/same-%'") == "1")
        #expect(try await row("/m/hls.m3u8") == "fetched|12000")
        let stored = files()
        #expect(stored.count == 5 && stored.allSatisfy { $0.range(of: #"^media/[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{64}$"#, options: .regularExpression) != nil },
                "\(stored)")
        // media_files (docs/media.md): each post's address beside its file, relative to the archive folder.
        let listed = try await sqlite(scratch.database, "SELECT url || ' ' || path FROM media_files WHERE status = 'fetched' ORDER BY url")
            .split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(listed.map { $0[0] } == ["/m/cut-1.mp3", "/m/gone-1.png", "/m/hls.m3u8", "/m/img-1.png", "/m/same-a.png", "/m/same-b.png"]
                .map { server.baseURL + $0 }, "\(listed)")
        #expect(Set(listed.map { "media/" + $0[1] }) == Set(stored), "every listed path is an archived file, and every file is listed")
        for file in stored {
            let digest = try await run(URL(fileURLWithPath: "/usr/bin/env"), ["sha256sum", scratch.folder.appendingPathComponent(file).path])
            #expect(digest.stdout.hasPrefix(String(file.suffix(64))), "a file's name is its SHA-256")
        }

        // Deleted at the source: the server's file goes (404 from now on), and the post leaves the
        // store as a sync's deletion takes it (a web feed has no delete, so the row goes as a
        // sweep's delete would: not through "keep"). The archive keeps its copy.
        try await server.control("POST", "/_control/delete")
        try await publish([("1", ["/m/img-1.png", "/m/same-a.png"]), ("2", ["/m/same-b.png", "/m/cut-1.mp3"])])
        _ = try await sqlite(scratch.database, "DELETE FROM posts WHERE feed = 'f' AND id LIKE '%3'")
        #expect(try await postCount(scratch.database, feed: "f") == 2)
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        #expect(try await feedsync(["media", "fetch", "--config", config]).stdout.contains("fetched 0 "))
        let pruned = try await feedsync(["media", "prune", "--config", config])
        #expect(pruned.status == 0 && pruned.stdout.contains("removed 0 unreferenced"), "\(pruned.stdout)")
        #expect(files().count == 5)
        #expect(try await row("/m/gone-1.png") == "fetched|2048")

        // A purge takes the feed's files with it.
        let removed = try await feedsync(["remove", "f", "--purge", "--config", config])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stderr.contains("removed 5 media files"), "\(removed.stderr)")
        #expect(files().isEmpty, "\(files())")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM media") == "0")
    }

    @Test func everyBadInputIsOneLogLineAndARowStatusAndLeavesNothingUnderAFinalName() async throws {
        let bad = ["/m/lie.png", "/m/more.mp3", "/m/redirect-file.png", "/m/redirect-ftp.png", "/m/loop.m3u8", "/m/many.m3u8"]
        try await publish([("1", bad), ("2", ["/m/img-2.png", "/m/..%2F..%2Fevil%00.png"])])
        let config = try writeConfig()
        let pull = try await feedsync(["pull", "--config", config])
        #expect(pull.status == 0, "\(pull.stderr)")
        let fetch = try await feedsync(["media", "fetch", "--config", config])
        #expect(fetch.status == 0, "no sync or run stops: \(fetch.stderr)")
        let lines = fetch.stderr.split(separator: "\n").filter { $0.contains("media not fetched") }
        #expect(lines.count == bad.count, "\(fetch.stderr)")
        for path in bad {
            #expect(lines.filter { $0.contains("url=\(server.baseURL)\(path) ") }.count == 1, "\(path): \(fetch.stderr)")
            #expect(try await row(path) == "refused|", "\(path)")
        }
        let reasons = try await sqlite(scratch.database, "SELECT reason FROM media WHERE status = 'refused' ORDER BY url")
        for phrase in ["text/html where the post said image/png", "more than the 1000 bytes its post announced", "file:///etc/passwd",
                       "ftp://", "leads back to", "100000 segments"] {
            #expect(reasons.contains(phrase), "\(phrase): \(reasons)")
        }
        // Only the two good files, under their digests; nothing partial, nothing outside the folder.
        #expect(try await row("/m/img-2.png") == "fetched|2048")
        #expect(try await row("/m/..%2F..%2Fevil%00.png") == "fetched|2048")
        let stored = files()
        #expect(stored.count == 2 && stored.allSatisfy { $0.hasPrefix("media/") && !$0.hasPrefix("media/.partial/") }, "\(stored)")
        // Refused items are not tried again.
        let again = try await feedsync(["media", "fetch", "--config", config])
        #expect(again.stdout.contains("fetched 0 (0 bytes), 0 failed, 0 refused"), "\(again.stdout)")
    }

    @Test func overMaxBytesTheOldestUnstarredMediaGoesFirstAndStatusSaysSo() async throws {
        try await publish([("1", ["/m/img-1.png"]), ("2", ["/m/img-2.png"]), ("3", ["/m/img-3.png"]), ("4", ["/m/img-4.png"])])
        let config = try writeConfig(media: #"{"path": "media", "maxBytes": "5000"}"#)
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        let oldest = try await sqlite(scratch.database, "SELECT id FROM posts WHERE feed = 'f' ORDER BY created_at LIMIT 1")
        #expect(try await feedsync(["star", oldest, "--config", config]).status == 0)
        let fetch = try await feedsync(["media", "fetch", "--config", config])
        #expect(fetch.status == 0 && fetch.stdout.contains("2 skipped for room"), "\(fetch.stdout)")
        // Item 1 is starred: items 2 and 3, the oldest unstarred, made room.
        #expect(try await row("/m/img-1.png") == "fetched|2048")
        #expect(try await row("/m/img-2.png") == "skipped|")
        #expect(try await row("/m/img-3.png") == "skipped|")
        #expect(try await row("/m/img-4.png") == "fetched|2048")
        #expect(files().count == 2)
        let status = try await feedsync(["media", "status", "--config", config, "--json"])
        #expect(status.stdout.contains(#""skippedForRoom" : 2"#) && status.stdout.contains(#""bytes" : 4096"#), "\(status.stdout)")
        let all = try await feedsync(["status", "--config", config, "--json"])
        #expect(all.stdout.contains(#""files" : 2"#), "\(all.stdout)")
    }

    @Test func aWebFeedEntryLinkingAPeerTubeVideoCarriesItAndItsHLSStreamIsArchived() async throws {
        try await server.control("POST", "/_control/feed", body: #"[{"id": "1", "link": "/w/kkGMgK9ZtnKfYAgnEtQxbv", "media": []}]"#)
        let config = try writeConfig(feedKeys: #""videos": {"integration": "peertube"},"#)
        let pull = try await feedsync(["pull", "--config", config])
        #expect(pull.status == 0 && pull.stdout.contains("1 videos resolved"), "\(pull.stdout) \(pull.stderr)")
        let video = try await sqlite(scratch.database, """
            SELECT id, resolved, title, duration_ms, stream_url, thumbnail_url, size_bytes, height, fps, view_count, like_count FROM videos WHERE feed = 'f'
            """)
        let base = server.baseURL
        #expect(video == "\(base)/w/kkGMgK9ZtnKfYAgnEtQxbv|1|A walk in the hills|754000|\(base)/m/hls.m3u8|\(base)/lazy-static/thumbnails/walk.jpg|12000|720|30.0|1234|56",
                "\(video)")
        let fetch = try await feedsync(["media", "fetch", "--config", config])
        #expect(fetch.status == 0, "\(fetch.stderr)")
        // The best variant's three segments joined; the thumbnail the fixture does not serve is a failed row.
        #expect(try await row("/m/hls.m3u8") == "fetched|12000")
        #expect(try await row("/lazy-static/thumbnails/walk.jpg") == "failed|")
        let stats = try await server.control("GET", "/_control/stats")["requests"] as? [String: Int] ?? [:]
        #expect(stats["/m/seg-720-0.ts"] == 1 && stats["/m/seg-360-0.ts"] == nil, "\(stats)")
    }

    @Test func aWebFeedEntryLinkingYouTubeIsDescribedByOEmbedOrLeftAsItIsWithOneLine() async throws {
        try await server.control("POST", "/_control/feed", body: #"""
            [{"id": "1", "link": "https://www.youtube.com/watch?v=dQw4w9WgXcQ", "media": []},
             {"id": "2", "link": "https://youtu.be/privatevid1", "media": []}]
            """#)
        let config = try writeConfig(feedKeys: #""videos": {"integration": "youtube", "oembedURL": "\#(server.baseURL)/oembed"},"#)
        let pull = try await feedsync(["pull", "--config", config])
        #expect(pull.status == 0, "\(pull.stderr)")
        let videos = try await sqlite(scratch.database, "SELECT id, resolved, title, author, stream_url, thumbnail_url FROM videos WHERE feed = 'f' ORDER BY id")
        #expect(videos == """
            youtube:dQw4w9WgXcQ|1|A song from 1987|A singer|https://www.youtube.com/watch?v=dQw4w9WgXcQ|\(server.baseURL)/m/img-yt.png
            youtube:privatevid1|0||||
            """, "\(videos)")
        #expect(pull.stderr.components(separatedBy: "YouTube video privatevid1 left as it is: oEmbed answered 401").count == 2, "\(pull.stderr)")
        // The archive keeps the thumbnail; a watch page is never fetched as a video.
        #expect(try await feedsync(["media", "fetch", "--config", config]).status == 0)
        #expect(try await row("/m/img-yt.png") == "fetched|2048")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM media WHERE url LIKE '%youtube.com%'") == "0")
    }

    @Test func feedsyncdFetchesAfterSyncing() async throws {
        try await publish([("1", ["/m/img-1.png", "/m/same-a.png", "/m/same-b.png"])])
        let config = try writeConfig()
        let daemon = try DaemonProcess(config: config, in: scratch)
        #expect(try await eventually { try await sqlite(scratch.database, "SELECT COUNT(*) FROM media WHERE status = 'fetched'") == "3" })
        #expect(files().count == 2)
        #expect(try await eventually { daemon.log.contains("event=media_fetched") }, "\(daemon.log)")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime(), "\(daemon.log)")
    }

    /// Without "media" the daemon's media service waits for a reload rather than a timer; the
    /// reload that brings the section starts the archive, over the posts already stored.
    @Test func aMediaSectionAddedOnSIGHUPIsFetchedWithoutARestart() async throws {
        try await publish([("1", ["/m/img-1.png", "/m/same-a.png", "/m/same-b.png"])])
        let config = try writeConfig()
        let withMedia = try Data(contentsOf: URL(fileURLWithPath: config))
        let withoutMedia = try JSONSerialization.jsonObject(with: withMedia) as? [String: Any] ?? [:]
        try JSONSerialization.data(withJSONObject: withoutMedia.filter { $0.key != "media" }).write(to: URL(fileURLWithPath: config))
        let daemon = try DaemonProcess(config: config, in: scratch, arguments: ["--log-level", "debug"])
        #expect(try await eventually { daemon.log.contains("event=sync_scheduled feed=f") }, "\(daemon.log)")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM media") == "0")

        try withMedia.write(to: URL(fileURLWithPath: config))
        daemon.signal(SIGHUP)
        #expect(try await eventually { try await sqlite(scratch.database, "SELECT COUNT(*) FROM media WHERE status = 'fetched'") == "3" },
                "\(daemon.log)")
        #expect(files().count == 2)
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime(), "\(daemon.log)")
    }
}

/// A disk that fills: the archive folder on a 64 KiB tmpfs (so root only; skipped elsewhere). One
/// fetch at a time, the audio first (by address): it fills the disk, and once its partial file is
/// gone the image fits.
@Suite struct MediaDiskFullEndToEndTests {
    @Test func aDiskThatFillsIsOneLineAndAFailedRowAndNoSyncStops() async throws {
        let server = try ReferenceServer(script: "Fixtures/media/server.py", arguments: [])
        let scratch = try Scratch()
        let media = scratch.folder.appendingPathComponent("media")
        try FileManager.default.createDirectory(at: media, withIntermediateDirectories: true)
        let mount = try await run(URL(fileURLWithPath: "/usr/bin/env"), ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", media.path])
        guard mount.status == 0 else { try Test.cancel("needs to mount a tmpfs (root): \(mount.stderr)") }
        defer { _ = Glibc.umount2(media.path, 2) }
        try await server.control("POST", "/_control/feed",
                                 body: #"[{"id": "1", "media": [{"url": "/m/audio-1.mp3", "type": "audio/mpeg"}, {"url": "/m/img-1.png", "type": "image/png"}]}]"#)
        let config = scratch.folder.appendingPathComponent("feedsync.json")
        try Data("""
            {"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
             "feeds": [{"name": "f", "posts": {"integration": "webfeed", "url": "\(server.baseURL)/feed.xml"}}],
             "media": {"path": "media", "concurrency": 1}}
            """.utf8).write(to: config)
        #expect(try await feedsync(["pull", "--config", config.path]).status == 0)
        let fetch = try await feedsync(["media", "fetch", "--config", config.path])
        #expect(fetch.status == 0, "\(fetch.stderr)")
        #expect(fetch.stderr.split(separator: "\n").filter { $0.contains("media not fetched") && $0.contains("the disk is full") }.count == 1,
                "\(fetch.stderr)")
        #expect(try await sqlite(scratch.database, "SELECT status FROM media WHERE url LIKE '%audio-1.mp3'") == "failed")
        #expect(try await sqlite(scratch.database, "SELECT status FROM media WHERE url LIKE '%img-1.png'") == "fetched")
        let partial = try FileManager.default.contentsOfDirectory(atPath: media.appendingPathComponent(".partial").path)
        #expect(partial.isEmpty, "the partial file is removed to give the space back")
        #expect(try await feedsync(["pull", "--config", config.path]).status == 0, "syncing goes on")
    }
}
