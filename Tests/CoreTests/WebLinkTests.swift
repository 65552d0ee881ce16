import Core
import Foundation
import Testing

/// A post's, an attachment's, an avatar's and a video's links are kept as text (`WebLink`) and read as the
/// same Foundation `URL`s they were made from.
@Suite struct WebLinkTests {
    @Test(arguments: [
        "https://example.com/a/b?c=d#e", "HTTP://Example.COM", "https://example.com/%E2%9C%93",
        "file:///tmp/a%20b", "about:blank", "https://[::1]:8080/",
    ])
    func aLinkKeepsItsURLsText(text: String) throws {
        let url = try #require(URL(string: text))
        let link = WebLink(url)
        #expect(link.absoluteString == url.absoluteString)
        #expect(link.url == url)
        #expect(WebLink(unparsed: text) == link)
    }

    @Test func aURLMadeFromAPathOrABaseIsKeptAsItsAbsoluteText() throws {
        let file = URL(fileURLWithPath: "/tmp/a b")
        #expect(WebLink(file).absoluteString == "file:///tmp/a%20b")
        #expect(WebLink(file).url.path == "/tmp/a b")
        let relative = try #require(URL(string: "c?d=1", relativeTo: URL(string: "https://example.com/a/b")))
        #expect(WebLink(relative).absoluteString == "https://example.com/a/c?d=1")
    }

    @Test func aPostsURLIsItsLink() throws {
        let author = User(id: UserID("u1"), handle: "u1", displayName: "U")
        let url = try #require(URL(string: "https://example.com/@u1/1"))
        var post = Post(id: PostID("1"), author: author, text: "hi", createdAt: Date(timeIntervalSince1970: 0), url: url)
        #expect(post.link == WebLink(unparsed: "https://example.com/@u1/1"))
        #expect(post.url == url)

        post.link = WebLink(unparsed: "https://example.com/@u1/2")
        #expect(post.url?.absoluteString == "https://example.com/@u1/2")
        post.url = nil
        #expect(post.link == nil)

        // Made either way, the same post.
        var linked = Post(id: PostID("1"), author: author, text: "hi", createdAt: Date(timeIntervalSince1970: 0))
        linked.link = WebLink(unparsed: "https://example.com/@u1/1")
        #expect(linked == Post(id: PostID("1"), author: author, text: "hi", createdAt: Date(timeIntervalSince1970: 0), url: url))
    }

    @Test func anAttachmentsAnAvatarsAndAVideosURLsAreTheirLinks() throws {
        let full = try #require(URL(string: "https://cdn.example/a.jpg")), small = try #require(URL(string: "https://cdn.example/a-small.jpg"))
        var byURL = Post.Attachment(kind: "image", url: full, previewURL: small, description: "a cat")
        let byLink = Post.Attachment(kind: "image", link: WebLink(unparsed: "https://cdn.example/a.jpg"),
                                     previewLink: WebLink(unparsed: "https://cdn.example/a-small.jpg"), description: "a cat")
        #expect(byURL == byLink)
        #expect(byLink.url == full && byLink.previewURL == small)
        byURL.previewURL = nil
        #expect(byURL.previewLink == nil)

        let avatar = try #require(URL(string: "https://cdn.example/me.png"))
        let user = User(id: UserID("u1"), handle: "u1", displayName: "U", avatarURL: avatar)
        #expect(user == User(id: UserID("u1"), handle: "u1", displayName: "U", avatar: WebLink(unparsed: "https://cdn.example/me.png")))
        #expect(user.avatarURL == avatar)
        #expect(User(id: UserID("u1"), handle: "u1", displayName: "U").avatar == nil)

        let stream = try #require(URL(string: "https://video.example/v/1.m3u8"))
        var video = Video(id: VideoID("v1"), title: "v", duration: 3, streamURL: stream, thumbnailURL: small)
        #expect(video == Video(id: VideoID("v1"), title: "v", duration: 3, stream: WebLink(unparsed: "https://video.example/v/1.m3u8"),
                               thumbnail: WebLink(unparsed: "https://cdn.example/a-small.jpg")))
        #expect(video.streamURL == stream && video.thumbnailURL == small)
        video.thumbnailURL = nil
        #expect(video.thumbnail == nil)
    }
}
