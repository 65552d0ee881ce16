import Core
import Foundation
import IntegrationKit

extension User {
    /// Maps an account; `acct` (`ada` or `bob@example.social`) is the handle.
    init(_ dto: MastodonAccount) throws {
        var avatars: [String: WebLink?] = [:]
        try self.init(dto, avatars: &avatars)
    }

    /// Maps an account as ``init(_:)`` does.
    ///
    /// - Parameter avatars: avatar links already checked on this page: a page names the same few
    ///   accounts many times, and checking a URL cost more than the rest of the account.
    init(_ dto: MastodonAccount, avatars: inout [String: WebLink?]) throws {
        guard !dto.id.isEmpty, !dto.acct.isEmpty else {
            throw ServiceError(.invalidItem, "reading account \(dto.id)", "the id or acct is empty")
        }
        var avatar: WebLink?
        if let text = dto.avatar {
            if let known = avatars[text] {
                avatar = known
            } else {
                avatar = WebURL.link(text)
                avatars[text] = avatar
            }
        }
        let name = dto.displayName.flatMap { $0.isEmpty ? nil : $0 } ?? dto.username ?? dto.acct
        self.init(id: UserID(dto.id), handle: dto.acct, displayName: name, avatar: avatar)
    }
}

extension Video {
    /// The longest a video may say it runs: a day. Anything longer, negative or not a number
    /// is a server's error, not a video.
    static let maxDuration: TimeInterval = 86_400

    /// Maps a `video` or `gifv` attachment; `nil` for other types and for media without a
    /// web URL to play.
    ///
    /// - Throws: ``ServiceError`` `.invalidItem` for a duration, frame size or rate out of range.
    init?(_ dto: MastodonMediaAttachment) throws {
        guard dto.type == "video" || dto.type == "gifv", let stream = (dto.url ?? dto.remoteURL).flatMap(WebURL.link) else { return nil }
        func invalid(_ reason: String) -> ServiceError { ServiceError(.invalidItem, "reading media \(dto.id)", "media \(dto.id): \(reason)") }
        let original = dto.original
        let duration = original?.duration ?? 0
        guard duration.isFinite, (0...Self.maxDuration).contains(duration) else { throw invalid("duration \(duration) is out of range") }
        for (name, value) in [("width", original?.width), ("height", original?.height)] {
            if let value, !(1...100_000).contains(value) { throw invalid("\(name) \(value) is out of range") }
        }
        var fps: Double?
        if let text = original?.frameRate {
            guard let rate = Self.frameRate(text), rate.isFinite, rate > 0, rate <= 1_000 else {
                throw invalid("frame_rate \"\(text)\" is not a frame rate")
            }
            fps = rate
        }
        self.init(id: VideoID(dto.id), title: dto.description ?? "", duration: duration, stream: stream,
                  thumbnail: dto.previewURL.flatMap(WebURL.link), width: original?.width, height: original?.height, framesPerSecond: fps)
    }

    /// `"30000/1001"` or `"30"` as frames per second.
    static func frameRate(_ text: String) -> Double? {
        let parts = text.split(separator: "/").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        switch parts.count {
        case 1: return parts[0]
        case 2: return parts[0].flatMap { numerator in parts[1].flatMap { $0 == 0 ? nil : numerator / $0 } }
        default: return nil
        }
    }
}

extension Post.Attachment {
    /// Maps an attachment that is not a video (`image`, `audio`, `unknown`); `nil` for one
    /// without a web URL.
    init?(_ dto: MastodonMediaAttachment) {
        guard dto.type != "video", dto.type != "gifv", let link = (dto.url ?? dto.remoteURL).flatMap(WebURL.link) else { return nil }
        self.init(kind: dto.type, link: link, previewLink: dto.previewURL.flatMap(WebURL.link), description: dto.description)
    }
}

extension Post {
    /// Maps a status. A reblog becomes a post with the original's content and author, the
    /// booster in ``Post/repost``, and the reblog's own id and time (its place in the timeline).
    ///
    /// - Throws: ``ServiceError`` `.invalidItem` naming what is wrong.
    init(_ dto: MastodonStatus) throws {
        var avatars: [String: WebLink?] = [:]
        var videos: [Video] = []
        try self.init(dto, avatars: &avatars, videos: &videos)
    }

    /// Maps a status as ``init(_:)`` does, adding the videos among its attachments to `videos`.
    ///
    /// - Parameter avatars: avatar links already checked on this page (see ``Core/User/init(_:avatars:)``).
    init(_ dto: MastodonStatus, avatars: inout [String: WebLink?], videos: inout [Video]) throws {
        func invalid(_ reason: String) -> ServiceError { ServiceError(.invalidItem, "reading status \(dto.id)", reason) }
        func user(_ account: MastodonAccount) throws -> User {
            do { return try User(account, avatars: &avatars) } catch let error as ServiceError { throw invalid(error.reason) }
        }
        guard !dto.id.isEmpty else { throw ServiceError(.invalidItem, "reading a status", "the id is empty") }
        guard let shared = RFC3339.date(from: dto.createdAt) else { throw invalid("created_at \"\(dto.createdAt)\" is not an ISO 8601 time") }
        let original = dto.reblog?.value ?? dto
        let booster = try dto.reblog.map { _ in try user(dto.account) }
        let author = try user(original.account)
        var edited: Date?
        if let text = original.editedAt {
            guard let date = RFC3339.date(from: text) else { throw invalid("edited_at \"\(text)\" is not an ISO 8601 time") }
            edited = date
        }
        var visibility: Visibility?
        if let text = original.visibility {
            visibility = text == "private" ? .followersOnly : Visibility(rawValue: text)
            guard visibility != nil else { throw invalid("visibility \"\(text)\" is not one Mastodon documents") }
        }
        let media = original.mediaAttachments ?? []
        var videoIDs: [VideoID] = []
        var attachments: [Attachment] = []
        for attachment in media {
            do {
                if let video = try Video(attachment) {
                    videos.append(video)
                    videoIDs.append(video.id)
                } else if let other = Attachment(attachment) {
                    attachments.append(other)
                }
            } catch let error as ServiceError {
                throw invalid(error.reason)
            }
        }
        let html = original.content ?? ""
        // A status linking a PeerTube watch URL carries that video, for the PeerTube video host to resolve.
        for link in PeerTubeWatchLink.links(inHTML: html) where !videoIDs.contains(VideoID(link.absoluteString)) {
            videoIDs.append(VideoID(link.absoluteString))
        }
        self.init(id: PostID(dto.id), author: author, text: HTMLText.plainText(html, .mastodon), createdAt: shared, editedAt: edited,
                  replyTo: original.inReplyToID.map { PostID($0) },
                  counts: Counts(replies: max(0, original.repliesCount ?? 0), reposts: max(0, original.reblogsCount ?? 0),
                                 likes: max(0, original.favouritesCount ?? 0)),
                  videoIDs: videoIDs, html: html,
                  contentWarning: original.spoilerText.flatMap { $0.isEmpty ? nil : $0 },
                  language: original.language, visibility: visibility,
                  repost: booster.map { Repost(by: $0, originalID: PostID(original.id), at: shared) },
                  attachments: attachments)
        link = original.url.flatMap(WebURL.link)
    }
}
