import Core
import Foundation
import IntegrationKit

/// A post as the HTTP API sends it (see API.md, "Post").
struct APIPost {
    struct Author: Hashable {
        var id: String
        var handle: String
        var displayName: String?
        var avatarURL: String?
    }

    struct Counts {
        var replies: Int?
        var reposts: Int?
        var likes: Int?
    }

    var id: String
    var author: Author
    var text: String
    var createdAt: String
    var editedAt: String?
    var replyTo: String?
    var counts: Counts?
    var videoIDs: [String]?
}

extension APIPost {
    /// Reads a post object; `id` is set as soon as the post's id is read, for the skip report.
    /// - Throws: `JSONReader.FieldError` for a missing or mistyped field, `SyntaxError` for bad JSON.
    init(reading reader: inout JSONReader, id seenID: inout String?) throws {
        guard try reader.peek() == UInt8(ascii: "{") else { throw JSONReader.FieldError(reason: "post is not of the expected type") }
        var id: String?, author: Author?, text: String?, createdAt: String?, editedAt: String?, replyTo: String?
        var counts: Counts?, videoIDs: [String]?
        try reader.readObject { reader, key in
            switch key {
            case "id":
                id = try reader.string("post.id")
                seenID = id
            case "author": author = try Author(reading: &reader)
            case "text": text = try reader.string("post.text")
            case "created_at": createdAt = try reader.string("post.created_at")
            case "edited_at": editedAt = try reader.optionalString("post.edited_at")
            case "reply_to": replyTo = try reader.optionalString("post.reply_to")
            case "counts": counts = try Counts(reading: &reader)
            case "video_ids": videoIDs = try reader.optionalStrings("post.video_ids")
            default: try reader.skipValue()
            }
        }
        func missing(_ field: String) -> JSONReader.FieldError { JSONReader.FieldError(reason: "post.\(field) is missing") }
        guard let id else { throw missing("id") }
        guard let author else { throw missing("author") }
        guard let text else { throw missing("text") }
        guard let createdAt else { throw missing("created_at") }
        self.init(id: id, author: author, text: text, createdAt: createdAt, editedAt: editedAt, replyTo: replyTo,
                  counts: counts, videoIDs: videoIDs)
    }
}

extension APIPost.Author {
    init(reading reader: inout JSONReader) throws {
        guard try reader.peek() == UInt8(ascii: "{") else { throw JSONReader.FieldError(reason: "post.author is not of the expected type") }
        var id: String?, handle: String?, name: String?, avatar: String?
        try reader.readObject { reader, key in
            switch key {
            case "id": id = try reader.string("post.author.id")
            case "handle": handle = try reader.string("post.author.handle")
            case "display_name": name = try reader.optionalString("post.author.display_name")
            case "avatar_url": avatar = try reader.optionalString("post.author.avatar_url")
            default: try reader.skipValue()
            }
        }
        guard let id else { throw JSONReader.FieldError(reason: "post.author.id is missing") }
        guard let handle else { throw JSONReader.FieldError(reason: "post.author.handle is missing") }
        self.init(id: id, handle: handle, displayName: name, avatarURL: avatar)
    }
}

extension APIPost.Counts {
    /// Reads the counts object; `null` reads as no counts.
    init?(reading reader: inout JSONReader) throws {
        if try reader.readNull() { return nil }
        guard try reader.peek() == UInt8(ascii: "{") else { throw JSONReader.FieldError(reason: "post.counts is not of the expected type") }
        var counts = APIPost.Counts()
        try reader.readObject { reader, key in
            switch key {
            case "replies": counts.replies = try reader.optionalInt("post.counts.replies")
            case "reposts": counts.reposts = try reader.optionalInt("post.counts.reposts")
            case "likes": counts.likes = try reader.optionalInt("post.counts.likes")
            default: try reader.skipValue()
            }
        }
        self = counts
    }
}

extension User {
    init(_ dto: APIPost.Author) throws {
        guard !dto.id.isEmpty else { throw ServiceError(.invalidItem, "reading an author", "the author id is empty") }
        guard !dto.handle.isEmpty else { throw ServiceError(.invalidItem, "reading author \(dto.id)", "the handle is empty") }
        var avatar: URL?
        if let string = dto.avatarURL {
            guard let url = URL(string: string), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
                throw ServiceError(.invalidItem, "reading author \(dto.id)", "avatar_url \"\(string)\" is not an http(s) URL")
            }
            avatar = url
        }
        let name = dto.displayName.flatMap { $0.isEmpty ? nil : $0 } ?? dto.handle
        self.init(id: UserID(dto.id), handle: dto.handle, displayName: name, avatarURL: avatar)
    }
}

extension Post {
    /// Maps a wire post, refusing one the contract does not allow.
    ///
    /// - Parameter authors: authors already mapped on this page: a page names the same few
    ///   authors many times, and mapping one parses its avatar URL.
    /// - Throws: ``ServiceError`` `.invalidItem` naming the field.
    init(_ dto: APIPost, authors: inout [APIPost.Author: User]) throws {
        func invalid(_ reason: String) -> ServiceError { ServiceError(.invalidItem, "reading post \(dto.id)", reason) }
        guard !dto.id.isEmpty else { throw ServiceError(.invalidItem, "reading a post", "the id is empty") }
        guard let created = RFC3339.date(from: dto.createdAt) else {
            throw invalid("created_at \"\(dto.createdAt)\" is not an RFC 3339 time")
        }
        var edited: Date?
        if let text = dto.editedAt {
            guard let date = RFC3339.date(from: text) else { throw invalid("edited_at \"\(text)\" is not an RFC 3339 time") }
            edited = date
        }
        let counts = Counts(replies: dto.counts?.replies ?? 0, reposts: dto.counts?.reposts ?? 0, likes: dto.counts?.likes ?? 0)
        guard counts.replies >= 0, counts.reposts >= 0, counts.likes >= 0 else { throw invalid("a count is negative") }
        let videoIDs = dto.videoIDs ?? []
        guard !videoIDs.contains(where: \.isEmpty) else { throw invalid("a video id is empty") }
        let author: User
        if let known = authors[dto.author] {
            author = known
        } else {
            do { author = try User(dto.author) } catch let error as ServiceError { throw invalid(error.reason) }
            authors[dto.author] = author
        }
        self.init(id: PostID(dto.id), author: author, text: dto.text, createdAt: created, editedAt: edited,
                  replyTo: dto.replyTo.flatMap { $0.isEmpty ? nil : PostID($0) }, counts: counts,
                  videoIDs: videoIDs.map { VideoID($0) })
    }
}
