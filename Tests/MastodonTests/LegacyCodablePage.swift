import Core
import Foundation
import IntegrationKit
@testable import Mastodon

/// The Codable path the Mastodon integration used before its `JSONReader` decoder, kept here
/// verbatim (DTOs, `LossyStatus`, the mapping and the `Character`-walking HTML renderer) as the
/// reference the new decoder must agree with.
enum LegacyCodablePage {
    struct Status: Decodable {
        var id: String
        var created_at: String
        var in_reply_to_id: String?
        var spoiler_text: String?
        var visibility: String?
        var language: String?
        var replies_count: Int?
        var reblogs_count: Int?
        var favourites_count: Int?
        var edited_at: String?
        var content: String?
        var url: String?
        var reblog: LegacyBox<Status>?
        var account: Account
        var media_attachments: [Media]?
    }

    struct Account: Decodable {
        var id: String
        var username: String?
        var acct: String
        var display_name: String?
        var avatar: String?
    }

    struct Media: Decodable {
        struct Meta: Decodable {
            struct Original: Decodable {
                var width: Int?
                var height: Int?
                var frame_rate: String?
                var duration: Double?
            }
            var original: Original?
        }

        var id: String
        var type: String
        var url: String?
        var preview_url: String?
        var remote_url: String?
        var description: String?
        var meta: Meta?
    }

    struct LossyStatus: Decodable {
        var status: Status?
        var id: String?
        var reason: String?

        private enum Keys: String, CodingKey { case id }

        init(from decoder: any Decoder) throws {
            do {
                status = try Status(from: decoder)
                id = status?.id
            } catch {
                id = try? decoder.container(keyedBy: Keys.self).decode(String.self, forKey: .id)
                if case DecodingError.keyNotFound(let key, _) = error {
                    reason = "\(key.stringValue) is missing"
                } else if case DecodingError.typeMismatch(_, let context) = error {
                    let path = context.codingPath.filter { $0.intValue == nil }.map(\.stringValue).joined(separator: ".")
                    reason = "\(path.isEmpty ? "the status" : path) has the wrong type"
                } else {
                    reason = "it cannot be read"
                }
            }
        }
    }

    /// What the old `MastodonPostService.page` made of a body: posts newest first, skipped
    /// items, the videos by id; `nil` when the body failed the page.
    static func map(_ body: Data) -> (posts: [Post], skipped: [SkippedItem], videos: [VideoID: Video])? {
        guard let items = try? JSONDecoder().decode([LossyStatus].self, from: body) else { return nil }
        var posts: [Post] = []
        var skipped: [SkippedItem] = []
        var videos: [VideoID: Video] = [:]
        for item in items {
            guard let status = item.status else {
                skipped.append(SkippedItem(id: item.id, reason: item.reason ?? "it cannot be read"))
                continue
            }
            do {
                posts.append(try post(status))
                for video in try (status.reblog?.value ?? status).media_attachments?.compactMap(video) ?? [] { videos[video.id] = video }
            } catch let error as ServiceError {
                skipped.append(SkippedItem(id: status.id, reason: error.reason))
            } catch {
                skipped.append(SkippedItem(id: status.id, reason: "\(error)"))
            }
        }
        return (posts, skipped, videos)
    }

    /// The web URL check as the legacy path made it: Foundation's parse, then its scheme and host.
    static func webURL(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              url.host?.isEmpty == false else { return nil }
        return url
    }

    static func user(_ dto: Account) throws -> User {
        guard !dto.id.isEmpty, !dto.acct.isEmpty else {
            throw ServiceError(.invalidItem, "reading account \(dto.id)", "the id or acct is empty")
        }
        let name = dto.display_name.flatMap { $0.isEmpty ? nil : $0 } ?? dto.username ?? dto.acct
        return User(id: UserID(dto.id), handle: dto.acct, displayName: name, avatarURL: dto.avatar.flatMap(webURL))
    }

    static func video(_ dto: Media) throws -> Video? {
        guard dto.type == "video" || dto.type == "gifv", let stream = (dto.url ?? dto.remote_url).flatMap(webURL) else { return nil }
        func invalid(_ reason: String) -> ServiceError { ServiceError(.invalidItem, "reading media \(dto.id)", "media \(dto.id): \(reason)") }
        let original = dto.meta?.original
        let duration = original?.duration ?? 0
        guard duration.isFinite, (0...Video.maxDuration).contains(duration) else { throw invalid("duration \(duration) is out of range") }
        for (name, value) in [("width", original?.width), ("height", original?.height)] {
            if let value, !(1...100_000).contains(value) { throw invalid("\(name) \(value) is out of range") }
        }
        var fps: Double?
        if let text = original?.frame_rate {
            guard let rate = Video.frameRate(text), rate.isFinite, rate > 0, rate <= 1_000 else {
                throw invalid("frame_rate \"\(text)\" is not a frame rate")
            }
            fps = rate
        }
        return Video(id: VideoID(dto.id), title: dto.description ?? "", duration: duration, streamURL: stream,
                     thumbnailURL: dto.preview_url.flatMap(webURL), width: original?.width, height: original?.height, framesPerSecond: fps)
    }

    static func attachment(_ dto: Media) -> Post.Attachment? {
        guard dto.type != "video", dto.type != "gifv", let url = (dto.url ?? dto.remote_url).flatMap(webURL) else { return nil }
        return Post.Attachment(kind: dto.type, url: url, previewURL: dto.preview_url.flatMap(webURL), description: dto.description)
    }

    static func post(_ dto: Status) throws -> Post {
        func invalid(_ reason: String) -> ServiceError { ServiceError(.invalidItem, "reading status \(dto.id)", reason) }
        guard !dto.id.isEmpty else { throw ServiceError(.invalidItem, "reading a status", "the id is empty") }
        guard let shared = RFC3339.date(from: dto.created_at) else { throw invalid("created_at \"\(dto.created_at)\" is not an ISO 8601 time") }
        let original = dto.reblog?.value ?? dto
        let booster: User?
        do { booster = dto.reblog == nil ? nil : try user(dto.account) } catch let error as ServiceError { throw invalid(error.reason) }
        let author: User
        do { author = try user(original.account) } catch let error as ServiceError { throw invalid(error.reason) }
        var edited: Date?
        if let text = original.edited_at {
            guard let date = RFC3339.date(from: text) else { throw invalid("edited_at \"\(text)\" is not an ISO 8601 time") }
            edited = date
        }
        var visibility: Post.Visibility?
        if let text = original.visibility {
            visibility = text == "private" ? .followersOnly : Post.Visibility(rawValue: text)
            guard visibility != nil else { throw invalid("visibility \"\(text)\" is not one Mastodon documents") }
        }
        let media = original.media_attachments ?? []
        let videos: [Video]
        do { videos = try media.compactMap(video) } catch let error as ServiceError { throw invalid(error.reason) }
        let html = original.content ?? ""
        return Post(id: PostID(dto.id), author: author, text: plainText(html), createdAt: shared, editedAt: edited,
                    replyTo: original.in_reply_to_id.map { PostID($0) },
                    counts: Post.Counts(replies: max(0, original.replies_count ?? 0), reposts: max(0, original.reblogs_count ?? 0),
                                        likes: max(0, original.favourites_count ?? 0)),
                    videoIDs: videos.map(\.id), html: html,
                    contentWarning: original.spoiler_text.flatMap { $0.isEmpty ? nil : $0 },
                    language: original.language, visibility: visibility,
                    repost: booster.map { Post.Repost(by: $0, originalID: PostID(original.id), at: shared) },
                    attachments: media.compactMap(attachment),
                    url: original.url.flatMap(URL.init(string:)).flatMap { ["http", "https"].contains($0.scheme ?? "") ? $0 : nil })
    }

    /// The old renderer, walking `Character`s.
    static func plainText(_ html: String) -> String {
        var text = ""
        var index = html.startIndex
        while index < html.endIndex {
            let character = html[index]
            if character == "<", let close = html[index...].firstIndex(of: ">") {
                let tag = html[html.index(after: index)..<close].lowercased()
                if tag.hasPrefix("br") {
                    text += "\n"
                } else if tag == "/p", html[html.index(after: close)...].contains("<p") {
                    text += "\n\n"
                }
                index = html.index(after: close)
            } else if character == "&", let semicolon = html[index...].prefix(12).firstIndex(of: ";"),
                      let decoded = entity(String(html[html.index(after: index)..<semicolon])) {
                text.unicodeScalars.append(decoded)
                index = html.index(after: semicolon)
            } else {
                text.append(character)
                index = html.index(after: index)
            }
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func entity(_ name: String) -> Unicode.Scalar? {
        switch name {
        case "amp": return "&"
        case "lt": return "<"
        case "gt": return ">"
        case "quot": return "\""
        case "apos": return "'"
        case "nbsp": return "\u{00A0}"
        default:
            guard name.hasPrefix("#") else { return nil }
            let digits = name.dropFirst()
            let value = digits.first == "x" || digits.first == "X" ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
            // Since issue 28: NUL, a surrogate or a number past U+10FFFF reads as U+FFFD, as HTML reads it.
            return value.map { $0 == 0 ? "\u{FFFD}" : Unicode.Scalar($0) ?? "\u{FFFD}" }
        }
    }
}

/// The old `Box`, decodable.
final class LegacyBox<Value: Decodable>: Decodable {
    let value: Value
    required init(from decoder: any Decoder) throws { value = try Value(from: decoder) }
}
