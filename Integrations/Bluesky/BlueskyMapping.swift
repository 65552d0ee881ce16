import Core
import Foundation
import IntegrationKit

/// Bounds on what one post may carry, generous beside the lexicons (300 graphemes of text,
/// 4 images, 3 languages): anything beyond is a server's error, not a post.
enum BlueskyBounds {
    static let maxTextBytes = 30_000
    static let maxShortTextBytes = 10_000
    static let maxCount = 10_000_000_000
    static let aspectRatio = 1...100_000
    static let maxLabelBytes = 128
    static let maxURLBytes = 8_192
}

extension User {
    /// Maps a profile: the DID is the id (it never changes), the handle is kept as the name
    /// people use, and replaced when a newer post shows a new one.
    init(_ dto: BlueskyProfile) throws {
        guard BlueskyIdentifier.isDID(dto.did) else {
            throw ServiceError(.invalidItem, "reading a profile", "did \"\(Terminal.safe(dto.did, limit: 80))\" is not a DID")
        }
        guard BlueskyIdentifier.isHandle(dto.handle) else {
            throw ServiceError(.invalidItem, "reading profile \(dto.did)", "handle \"\(Terminal.safe(dto.handle, limit: 80))\" is not a handle")
        }
        let name = dto.displayName.flatMap { $0.isEmpty || $0.utf8.count > 640 ? nil : $0 } ?? dto.handle
        self.init(id: UserID(dto.did), handle: dto.handle, displayName: name, avatar: webLink(dto.avatar))
    }
}

extension Video {
    /// Maps `app.bsky.embed.video#view`: the HLS playlist is the stream, the alt text the
    /// title, the aspect ratio the frame (Bluesky gives no pixel size or duration). `nil` for
    /// a view without a CID or a web playlist.
    ///
    /// - Throws: ``ServiceError`` `.invalidItem` for an aspect ratio out of range.
    init?(_ dto: BlueskyVideoView) throws {
        guard let cid = dto.cid, !cid.isEmpty, cid.utf8.count <= 256, let stream = webLink(dto.playlist) else { return nil }
        let ratio = try checked(dto.aspectRatio, "video \(cid)")
        self.init(id: VideoID(cid), title: try bounded(dto.alt, "the video's alt text") ?? "", duration: 0, stream: stream,
                  thumbnail: webLink(dto.thumbnail), width: ratio?.width, height: ratio?.height)
    }
}

extension BlueskyEmbedView {
    /// The video this embed shows, directly or beside a quoted record.
    func video() throws -> Video? {
        switch self {
        case .video(let view): return try Video(view)
        case .recordWithMedia(_, let media?): return try media.video()
        default: return nil
        }
    }

    /// The images and link cards this embed shows, as attachments: an image's `fullsize` is its
    /// URL and `thumb` its preview, its aspect ratio goes into width and height; a card's
    /// `uri`, `thumb`, title and description. Entries without a web URL are left out.
    func attachments() throws -> [Post.Attachment] {
        switch self {
        case .images(let images):
            return try images.compactMap { image in
                guard let link = webLink(image.fullsize) else { return nil }
                let ratio = try checked(image.aspectRatio, "an image")
                return Post.Attachment(kind: "image", link: link, previewLink: webLink(image.thumb),
                                       description: try bounded(image.alt, "an image's alt text"), width: ratio?.width, height: ratio?.height)
            }
        case .external(let card):
            guard let link = webLink(card.uri) else { return [] }
            return [Post.Attachment(kind: "link", link: link, previewLink: webLink(card.thumb),
                                    description: try bounded(card.description, "a link card's description"),
                                    title: try bounded(card.title, "a link card's title"))]
        case .recordWithMedia(_, let media?): return try media.attachments()
        default: return []
        }
    }

    /// The post this embed quotes: a record whose URI names a post (not a feed or a list).
    var quotedPost: PostID? {
        switch self {
        case .record(let uri?), .recordWithMedia(let uri?, _):
            return BlueskyIdentifier.atURI(uri, collection: "app.bsky.feed.post") != nil ? PostID(uri) : nil
        default: return nil
        }
    }
}

extension Post {
    /// Maps a timeline item.
    ///
    /// A post's id is its `at://` URI. A repost is an entry of its own, with the repost
    /// record's URI as id (or, from servers that do not send it, the post's URI and the
    /// reposter's DID): it carries the original's content and author, the reposter and the
    /// repost's time in ``Post/repost``, so the original post, stored under its own URI, and
    /// the repost never overwrite each other.
    ///
    /// - Throws: ``ServiceError`` `.invalidItem` naming what is wrong.
    init(_ dto: BlueskyFeedItem) throws {
        var authors: [BlueskyProfile: User] = [:]
        try self.init(dto, authors: &authors)
    }

    /// Maps a timeline item, reusing the authors already checked on its page.
    init(_ dto: BlueskyFeedItem, authors: inout [BlueskyProfile: User]) throws {
        var repost: BlueskyRepost?
        if let reason = dto.repost {
            guard let at = RFC3339.date(from: reason.indexedAt) else {
                throw ServiceError(.invalidItem, "reading post \(Terminal.safe(dto.post.uri, limit: 120))",
                                   "reason.indexedAt \"\(Terminal.safe(reason.indexedAt, limit: 40))\" is not an RFC 3339 time")
            }
            repost = BlueskyRepost(by: reason.by, uri: reason.uri, at: at)
        }
        try self.init(dto.post, repost: repost, authors: &authors)
    }

    /// Maps a post view, as the entry of `repost` when it is one (the live mirror's reposts,
    /// whose time it has read from the stream), reusing the authors already checked.
    init(_ view: BlueskyPostView, repost reposted: BlueskyRepost?, authors: inout [BlueskyProfile: User]) throws {
        func invalid(_ reason: String) -> ServiceError {
            ServiceError(.invalidItem, "reading post \(Terminal.safe(view.uri, limit: 120))", reason)
        }
        guard let uri = BlueskyIdentifier.atURI(view.uri, collection: "app.bsky.feed.post") else {
            throw invalid("uri \"\(Terminal.safe(view.uri, limit: 120))\" is not the at:// URI of a post")
        }
        let author: User
        do { author = try Self.user(view.author, &authors) } catch { throw invalid(Self.reason(error)) }
        guard uri.authority == view.author.did else { throw invalid("the post's repository \(uri.authority) is not its author's, \(view.author.did)") }
        guard let createdText = view.record.createdAt else { throw invalid("record.createdAt is missing") }
        guard let created = RFC3339.date(from: createdText) else {
            throw invalid("record.createdAt \"\(Terminal.safe(createdText, limit: 40))\" is not an RFC 3339 time")
        }
        guard RFC3339.date(from: view.indexedAt) != nil else {
            throw invalid("indexedAt \"\(Terminal.safe(view.indexedAt, limit: 40))\" is not an RFC 3339 time")
        }
        guard view.record.text.utf8.count <= BlueskyBounds.maxTextBytes else {
            throw invalid("the text is \(view.record.text.utf8.count) bytes long, more than \(BlueskyBounds.maxTextBytes)")
        }

        var counts = Counts()
        for (name, value, keyPath) in [("replyCount", view.replyCount, \Counts.replies), ("repostCount", view.repostCount, \Counts.reposts),
                                       ("likeCount", view.likeCount, \Counts.likes), ("quoteCount", view.quoteCount, \Counts.quotes)] {
            guard let value else { continue }
            guard (0...BlueskyBounds.maxCount).contains(value) else { throw invalid("\(name) \(value) is out of range") }
            counts[keyPath: keyPath] = value
        }

        var replyTo: PostID?
        if let parent = view.record.replyParent {
            guard BlueskyIdentifier.atURI(parent, collection: "app.bsky.feed.post") != nil else {
                throw invalid("reply.parent.uri \"\(Terminal.safe(parent, limit: 120))\" is not the at:// URI of a post")
            }
            replyTo = PostID(parent)
        }

        var repost: Repost?
        let id = BlueskyFeedItem.postID(uri: view.uri, repostURI: reposted?.uri, reposter: reposted?.by.did)
        if let reposted {
            let by: User
            do { by = try Self.user(reposted.by, &authors) } catch { throw invalid("the reposter: \(Self.reason(error))") }
            repost = Repost(by: by, originalID: PostID(view.uri), at: reposted.at)
        }

        let attachments: [Attachment]
        do { attachments = try view.embed?.attachments() ?? [] } catch { throw invalid(Self.reason(error)) }
        let video: Video?
        do { video = try view.embed?.video() } catch { throw invalid(Self.reason(error)) }

        var labels: [String] = []
        let negated = Set(view.labels.filter(\.neg).map(\.val))
        for value in view.labels.filter({ !$0.neg }).map(\.val) + view.record.selfLabels where !negated.contains(value) {
            guard (1...BlueskyBounds.maxLabelBytes).contains(value.utf8.count), value.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                throw invalid("label \"\(Terminal.safe(value, limit: 40))\" is not a label value")
            }
            if !labels.contains(value) { labels.append(value) }
        }

        let text = view.record.text
        self.init(id: id, author: author, text: text, createdAt: created, replyTo: replyTo, counts: counts,
                  videoIDs: video.map { [$0.id] } ?? [],
                  html: text.isEmpty ? nil : BlueskyRichText.html(text, facets: view.record.facets),
                  language: view.record.langs.first(where: Self.isLanguageTag), visibility: .public,
                  repost: repost, attachments: attachments, quoteOf: view.embed?.quotedPost, labels: labels)
        link = WebURL.link("https://bsky.app/profile/\(uri.authority)/post/\(uri.recordKey)")
    }

    /// A profile's user, checked once per page.
    private static func user(_ profile: BlueskyProfile, _ known: inout [BlueskyProfile: User]) throws -> User {
        if let user = known[profile] { return user }
        let user = try User(profile)
        known[profile] = user
        return user
    }

    private static func reason(_ error: Error) -> String { (error as? ServiceError)?.reason ?? "\(error)" }

    /// A BCP 47 tag as far as it matters here: 2–35 letters, digits and hyphens.
    static func isLanguageTag(_ text: String) -> Bool {
        (2...35).contains(text.utf8.count) && text.utf8.allSatisfy { $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0)
            || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
    }
}

/// A repost as the mapping takes it: who reposted, the repost record's URI when known, and when,
/// as a time already read (a timeline's `reason.indexedAt`, or the live mirror's event time).
struct BlueskyRepost: Hashable {
    var by: BlueskyProfile
    var uri: String?
    var at: Date
}

extension SkippedItem {
    /// A timeline item that cannot be mapped, as a poll and the live mirror both report it: the
    /// post's URI, why, and the id the item would be stored under.
    init(_ view: BlueskyPostView, storedAs id: PostID, _ error: any Error) {
        self.init(id: view.uri, reason: (error as? ServiceError)?.reason ?? "it cannot be read", postID: id)
    }
}

/// An aspect ratio within ``BlueskyBounds/aspectRatio``, or `nil` for none.
private func checked(_ ratio: BlueskyAspectRatio?, _ what: String) throws -> BlueskyAspectRatio? {
    guard let ratio else { return nil }
    guard BlueskyBounds.aspectRatio.contains(ratio.width), BlueskyBounds.aspectRatio.contains(ratio.height) else {
        throw ServiceError(.invalidItem, "reading \(what)", "the aspect ratio \(ratio.width):\(ratio.height) of \(what) is out of range")
    }
    return ratio
}

/// An optional text within ``BlueskyBounds/maxShortTextBytes``; empty reads as none.
private func bounded(_ text: String?, _ what: String) throws -> String? {
    guard let text, !text.isEmpty else { return nil }
    guard text.utf8.count <= BlueskyBounds.maxShortTextBytes else {
        throw ServiceError(.invalidItem, "reading \(what)", "\(what) is \(text.utf8.count) bytes long, more than \(BlueskyBounds.maxShortTextBytes)")
    }
    return text
}
