import Core
import Foundation
import ProcessTestSupport
@testable import ReaderAPI
import Testing

/// The served Atom with everything a post can hold — a boost, attachments, hostile text — checked
/// against RFC 4287's RELAX NG schema (Fixtures/atom/atom.rnc) by jing.
@Suite struct AtomDocumentTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func jing(_ bytes: [UInt8]) async throws -> (status: Int32, output: String) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("atom-\(UUID().uuidString).xml")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = ["jing", "-c", root.appendingPathComponent("Fixtures/atom/atom.rnc").path, file.path]
                let output = makePipe()
                process.standardOutput = output
                process.standardError = FileHandle.nullDevice
                do { try launch(process) } catch { return continuation.resume(returning: (-1, "\(error)")) }
                let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                continuation.resume(returning: (process.terminationStatus, text))
            }
        }
    }

    @Test func everythingAPostHoldsIsValidAtom() async throws {
        var post = Post(id: "p<1>&\"'", author: User(id: "u1", handle: "ada", displayName: "Ada \u{1}<Lovelace>"),
                        text: "a & b < c\n\u{0}nul \u{FFFE} \u{1b}[31m <script>alert(1)</script>",
                        createdAt: Date(timeIntervalSince1970: 1_700_000_000.25))
        post.repost = Post.Repost(by: User(id: "u2", handle: "bob", displayName: ""), originalID: "o1")
        post.url = URL(string: "https://example.org/p?a=1&b=2")
        post.attachments = [Post.Attachment(kind: "audio", url: URL(string: "https://example.org/a.mp3")!, mimeType: "audio/mpeg", sizeBytes: 123),
                            Post.Attachment(kind: "image", url: URL(string: "https://example.org/i")!, mimeType: "not a type")]
        post.editedAt = Date(timeIntervalSince1970: 1_700_000_100)
        let video = Video(id: "v1", title: "v", duration: 60, streamURL: URL(string: "https://example.org/v.webm")!, sizeBytes: 999)
        let stored = StoredPost(feed: "home", post: post, isRead: true, isStarred: true, videos: [video])
        let bytes = AtomDocument.render(title: "feedsync: home", selfURL: "/feeds/home.atom?c=c1&n=2", nextURL: "/feeds/home.atom?c=c2&n=2",
                                        posts: [stored, StoredPost(feed: "home", post: Post(id: "p2", author: User(id: "u3", handle: "", displayName: ""),
                                                                                        text: "", createdAt: Date(timeIntervalSince1970: 0)), isRead: false)])
        let text = String(decoding: bytes, as: UTF8.self)
        let result = try await Self.jing(bytes)
        #expect(result.status == 0, "\(result.output)\n\(text)")
        #expect(text.contains(#"<link rel="enclosure" href="https://example.org/a.mp3" type="audio/mpeg" length="123"/>"#))
        #expect(text.contains(#"<link rel="enclosure" href="https://example.org/v.webm" type="video/webm" length="999"/>"#))
        #expect(text.contains("<contributor><name>bob</name></contributor>") && text.contains("bob boosted ada"))
        #expect(text.contains("&lt;p&gt;Boosted by bob&lt;/p&gt;a &amp;amp; b"), "the boost said first in the content")

        // The same post as a Google Reader item and a JSON Feed item: the original's author, the
        // booster said, both files as enclosures.
        var writer = JSONWriter(escaping: [.controlsAsUnicode, .replacingNUL])
        GReaderJSON.item(stored, group: nil, to: &writer)
        let item = try #require(try JSONSerialization.jsonObject(with: Data(writer.bytes)) as? [String: Any])
        #expect((item["author"] as? String)?.hasPrefix("Ada ") == true, "the original's author, not the booster")
        #expect(((item["summary"] as? [String: Any])?["content"] as? String)?.hasPrefix("<p>Boosted by bob</p>") == true)
        let enclosures = (item["enclosure"] as? [[String: Any]] ?? []).map { "\($0["href"] ?? "") \($0["type"] ?? "-") \($0["length"] ?? "-")" }
        #expect(enclosures == ["https://example.org/a.mp3 audio/mpeg 123", "https://example.org/i - -", "https://example.org/v.webm video/webm 999"])
        let feed = try #require(try JSONSerialization.jsonObject(with: Data(JSONFeedDocument.render(title: "t", selfURL: "/s", nextURL: nil,
                                                                                                  posts: [stored]))) as? [String: Any])
        let entry = try #require((feed["items"] as? [[String: Any]])?.first)
        #expect((entry["attachments"] as? [[String: Any]])?.compactMap { $0["mime_type"] as? String }
            == ["audio/mpeg", "application/octet-stream", "video/webm"])
        #expect((entry["content_text"] as? String)?.hasPrefix("Boosted by bob\n\na & b") == true)
        #expect(!text.contains("<script>") && !text.contains("\u{0}") && !text.contains("\u{1b}") && !text.contains("\u{FFFE}"))
        #expect(text.contains(#"<link rel="next" href="/feeds/home.atom?c=c2&amp;n=2"/>"#))
    }

    @Test func aDocumentMissingWhatRFC4287RequiresIsRefusedByTheSchema() async throws {
        // The check itself can fail: an entry without its updated date is not Atom.
        let broken = #"<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><id>urn:x</id>"#
            + "<updated>2020-01-01T00:00:00Z</updated><entry><title>e</title><id>urn:y</id></entry></feed>"
        #expect(try await Self.jing(Array(broken.utf8)).status != 0)
    }
}
