import Core
import Foundation

/// A post as the HTTP API sends it (see API.md, "Post").
struct APIPost: Decodable {
    struct Author: Decodable {
        var id: String
        var handle: String
        var display_name: String?
        var avatar_url: String?
    }

    struct Counts: Decodable {
        var replies: Int?
        var reposts: Int?
        var likes: Int?
    }

    var id: String
    var author: Author
    var text: String
    var created_at: String
    var edited_at: String?
    var reply_to: String?
    var counts: Counts?
    var video_ids: [String]?
}

extension User {
    init(_ dto: APIPost.Author) throws {
        guard !dto.id.isEmpty else { throw ServiceError(.invalidItem, "reading an author", "the author id is empty") }
        guard !dto.handle.isEmpty else { throw ServiceError(.invalidItem, "reading author \(dto.id)", "the handle is empty") }
        var avatar: URL?
        if let string = dto.avatar_url {
            guard let url = URL(string: string), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
                throw ServiceError(.invalidItem, "reading author \(dto.id)", "avatar_url \"\(string)\" is not an http(s) URL")
            }
            avatar = url
        }
        let name = dto.display_name.flatMap { $0.isEmpty ? nil : $0 } ?? dto.handle
        self.init(id: UserID(dto.id), handle: dto.handle, displayName: name, avatarURL: avatar)
    }
}

extension Post {
    /// Maps a wire post, refusing one the contract does not allow.
    /// - Throws: ``ServiceError`` `.invalidItem` naming the field.
    init(_ dto: APIPost) throws {
        func invalid(_ reason: String) -> ServiceError { ServiceError(.invalidItem, "reading post \(dto.id)", reason) }
        guard !dto.id.isEmpty else { throw ServiceError(.invalidItem, "reading a post", "the id is empty") }
        guard let created = RFC3339.date(from: dto.created_at) else {
            throw invalid("created_at \"\(dto.created_at)\" is not an RFC 3339 time")
        }
        var edited: Date?
        if let text = dto.edited_at {
            guard let date = RFC3339.date(from: text) else { throw invalid("edited_at \"\(text)\" is not an RFC 3339 time") }
            edited = date
        }
        let counts = Counts(replies: dto.counts?.replies ?? 0, reposts: dto.counts?.reposts ?? 0, likes: dto.counts?.likes ?? 0)
        guard counts.replies >= 0, counts.reposts >= 0, counts.likes >= 0 else { throw invalid("a count is negative") }
        let videoIDs = dto.video_ids ?? []
        guard !videoIDs.contains(where: \.isEmpty) else { throw invalid("a video id is empty") }
        let author: User
        do { author = try User(dto.author) } catch let error as ServiceError { throw invalid(error.reason) }
        self.init(id: PostID(dto.id), author: author, text: dto.text, createdAt: created, editedAt: edited,
                  replyTo: dto.reply_to.flatMap { $0.isEmpty ? nil : PostID($0) }, counts: counts,
                  videoIDs: videoIDs.map { VideoID($0) })
    }
}
