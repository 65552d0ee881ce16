import Core
import Foundation
@testable import MediaArchive
import IntegrationKit
import ProcessTestSupport
import Testing

@Suite struct HLSPlaylistTests {
    let base = URL(string: "https://videos.example/static/hls/abc/master.m3u8")!

    @Test func aMultivariantPlaylistsBestVariantIsTheLargestPicture() throws {
        let playlist = try HLSPlaylist("""
            #EXTM3U
            #EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,CODECS="avc1.42e00a,mp4a.40.2"
            360.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=2500000,RESOLUTION=1280x720
            720.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=1200000,RESOLUTION=854x480
            https://cdn.example/480.m3u8
            """, base: base)
        #expect(playlist.variants.count == 3)
        #expect(playlist.best?.url.absoluteString == "https://videos.example/static/hls/abc/720.m3u8")
        #expect(playlist.variants[2].url.absoluteString == "https://cdn.example/480.m3u8")
        #expect(playlist.segments.isEmpty)
    }

    @Test func aMediaPlaylistListsItsMapAndSegmentsInOrder() throws {
        let playlist = try HLSPlaylist("""
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXT-X-MAP:URI="init.mp4"
            #EXTINF:4.0,
            seg0.ts
            #EXTINF:4.0,
            seg1.ts
            #EXT-X-ENDLIST
            """, base: base)
        #expect(playlist.map?.lastPathComponent == "init.mp4")
        #expect(playlist.segments.map(\.lastPathComponent) == ["seg0.ts", "seg1.ts"])
        #expect(playlist.best == nil)
    }

    @Test func textThatIsNoPlaylistOrListsAnotherSchemeIsRefused() {
        #expect(throws: PlaylistError.self) { try HLSPlaylist("<html>not a playlist</html>", base: base) }
        #expect(throws: PlaylistError.self) { try HLSPlaylist("#EXTM3U\n#EXTINF:4,\nfile:///etc/passwd\n", base: base) }
    }

    @Test func attributesReadQuotedValuesWithCommas() {
        let attributes = HLSPlaylist.attributes(#"BANDWIDTH=5,CODECS="a,b",RESOLUTION=1x2"#)
        #expect(attributes == ["BANDWIDTH": "5", "CODECS": "a,b", "RESOLUTION": "1x2"])
    }
}

@Suite struct MediaTypeCheckTests {
    @Test func anHTMLPageIsNotAnImageNorAVideo() {
        #expect(MediaTypeCheck.mismatch(kind: .image, expected: nil, received: "text/html; charset=utf-8") != nil)
        #expect(MediaTypeCheck.mismatch(kind: .video, expected: nil, received: "text/html") != nil)
        #expect(MediaTypeCheck.mismatch(kind: .audio, expected: "audio/mpeg", received: "text/html") != nil)
    }

    @Test func whatFitsIsAccepted() {
        #expect(MediaTypeCheck.mismatch(kind: .image, expected: "image/png", received: "image/jpeg") == nil)
        #expect(MediaTypeCheck.mismatch(kind: .avatar, expected: nil, received: "image/webp") == nil)
        #expect(MediaTypeCheck.mismatch(kind: .video, expected: nil, received: "application/vnd.apple.mpegurl") == nil)
        #expect(MediaTypeCheck.mismatch(kind: .audio, expected: "audio/mpeg", received: "application/octet-stream") == nil)
        #expect(MediaTypeCheck.mismatch(kind: .audio, expected: "audio/mp4", received: "video/mp4") == nil)
        #expect(MediaTypeCheck.mismatch(kind: .image, expected: nil, received: nil) == nil)
    }

    @Test func aTypeOfAnotherMajorThanThePostSaidIsRefused() {
        #expect(MediaTypeCheck.mismatch(kind: .image, expected: "image/png", received: "video/mp4") != nil)
    }
}

@Suite struct ArchiveFolderTests {
    @Test func filesAreNamedByTheirDigestUnderTwoLevelsAndTheSameBytesAreOneFile() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("archive-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = try ArchiveFolder(root)
        let first = URL(string: "https://a.example/1.png")!
        let second = URL(string: "https://b.example/2.png")!
        for url in [first, second] {
            let (file, size) = try folder.openPartial(of: url)
            #expect(size == 0)
            _ = "abc".withCString { write(file, $0, 3) }
            close(file)
        }
        let digest = try folder.install(partialOf: first)
        #expect(digest == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(try folder.install(partialOf: second) == digest)
        #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent("ba/78/\(digest)").path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(".partial").path).isEmpty)
        try folder.removeFile(digest: digest)
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("ba").path))
    }

    @Test func aDigestReadBackThatIsNotHexNamesNoPath() {
        #expect(MediaItem.localPath(forDigest: "../../etc/passwd") == nil)
        #expect(MediaItem.localPath(forDigest: String(repeating: "A", count: 64)) == nil)
        #expect(MediaItem.localPath(forDigest: String(repeating: "a", count: 63) + "\0") == nil)
    }
}

@Suite struct PeerTubeWatchLinkTests {
    @Test(arguments: ["https://tube.example/w/kkGMgK9ZtnKfYAgnEtQxbv", "https://tube.example/videos/watch/9c9de5e8-0a1e-484a-b099-e80766180a6d",
                      "https://tube.example:8443/videos/embed/9c9de5e8-0a1e-484a-b099-e80766180a6d", "http://tube.example/w/7"])
    func watchURLsAreRecognised(_ text: String) throws {
        let link = try #require(PeerTubeWatchLink.parse(URL(string: text)!))
        #expect(link.instance.host == "tube.example" && !link.id.isEmpty)
    }

    @Test(arguments: ["https://tube.example/w/", "https://tube.example/w/../../etc", "https://tube.example/watch?v=x",
                      "ftp://tube.example/w/kkGMgK9ZtnKfYAgnEtQxbv", "https://tube.example/w/has%20space", "https://tube.example/videos/watch/0OIl0OIl0OIl0OIl0OIl0O"])
    func otherURLsAreNot(_ text: String) {
        #expect(URL(string: text).flatMap(PeerTubeWatchLink.parse) == nil)
    }

    @Test func linksAreFoundInAStatusMarkupOnceEach() {
        let html = #"<p>Watch <a href="https://tube.example/w/kkGMgK9ZtnKfYAgnEtQxbv">this</a> and <a href="https://x.example/">that</a> "#
            + #"<a href="https://tube.example/w/kkGMgK9ZtnKfYAgnEtQxbv">again</a></p>"#
        #expect(PeerTubeWatchLink.links(inHTML: html).map(\.absoluteString) == ["https://tube.example/w/kkGMgK9ZtnKfYAgnEtQxbv"])
    }

    /// The byte scanner finds exactly what parsing every link's text as a URL found (the reference
    /// below is the scanner as it was before issue 40 skipped links that cannot hold a watch path),
    /// over seeded markups mixing mentions, hashtags, watch links in every form, escapes, `&amp;`,
    /// unclosed quotes and more links than the limit.
    @Test func theScannerFindsWhatParsingEveryLinkFound() {
        let pieces = [#"<a href="https://social.example/@alice">@alice</a> "#, #"<a href="https://social.example/tags/video">#video</a> "#,
                      #"<a href="https://tube.example/w/kkGMgK9ZtnKfYAgnEtQxbv">w</a> "#, #"<a href="https://tube.example/w/7">n</a> "#,
                      #"<a href="https://tube.example/videos/watch/9c9de5e8-0a1e-484a-b099-e80766180a6d?start=1&amp;t=2">v</a> "#,
                      #"<a href="https://tube.example:8443/videos/embed/9c9de5e8-0a1e-484a-b099-e80766180a6d">e</a> "#,
                      #"<a href="https://tube.example/%77/kkGMgK9ZtnKfYAgnEtQxbw">escaped w</a> "#, #"<a href="https://other.example//w//12">slashes</a> "#,
                      #"<a href="https://tube.example/W/kkGMgK9ZtnKfYAgnEtQxbv">capital</a> "#, #"<a href="ftp://tube.example/w/8">ftp</a> "#,
                      #"<a href="/w/9">relative</a> "#, "plain text /w/10 and href= without a quote ", #"href=""#, "é ü 漢 ",
                      #"<a href="https://tube.example/w/"#]
        var random = SeededRandom(seed: 40)
        for _ in 0..<2_000 {
            let html = (0..<random.next(below: 24)).map { _ in pieces[random.next(below: pieces.count)] }.joined()
            let limit = 1 + random.next(below: 8)
            #expect(PeerTubeWatchLink.links(inHTML: html, limit: limit) == Self.everyLinkParsed(html, limit: limit), "\(html)")
        }
    }

    private static func everyLinkParsed(_ html: String, limit: Int) -> [URL] {
        var found: [URL] = []
        var rest = html.utf8.prefix(64 * 1024)[...]
        let marker = Array("href=\"".utf8)
        while found.count < limit, let start = rest.firstRange(of: marker) {
            rest = rest[start.upperBound...]
            guard let end = rest.firstIndex(of: UInt8(ascii: "\"")) else { break }
            let text = String(decoding: rest[..<end], as: UTF8.self).replacingOccurrences(of: "&amp;", with: "&")
            rest = rest[end...]
            if let url = URL(string: text), PeerTubeWatchLink.parse(url) != nil, !found.contains(url) { found.append(url) }
        }
        return found
    }
}
