import Core
import Foundation
import IntegrationKit

/// A page of `GET /v1/feed` (see API.md, "The feed").
struct APIFeedResponse {
    var changes: [APIChange]
    var nextCursor: String
    var hasMore: Bool

    /// Reads a page body.
    /// - Throws: `JSONReader.SyntaxError` when the body is not JSON, `JSONReader.FieldError`
    ///   when the page itself lacks or mistypes `changes`, `next_cursor` or `has_more`.
    init(body: Data) throws {
        let read: (changes: [APIChange]?, next: String?, more: Bool?) = try body.withUnsafeBytes { raw in
            var reader = JSONReader(raw.bindMemory(to: UInt8.self))
            var changes: [APIChange]?, next: String?, more: Bool?
            guard try reader.peek() == UInt8(ascii: "{") else { throw JSONReader.FieldError(reason: "the page is not an object") }
            try reader.readObject { reader, key in
                switch key {
                case "changes":
                    guard try reader.peek() == UInt8(ascii: "[") else { throw JSONReader.FieldError(reason: "changes is not an array") }
                    var list: [APIChange] = []
                    try reader.readArray { reader in list.append(try APIChange(reading: &reader)) }
                    changes = list
                case "next_cursor": next = try reader.string("next_cursor")
                case "has_more": more = try reader.bool("has_more")
                default: try reader.skipValue()
                }
            }
            guard reader.isAtEnd else { throw JSONReader.SyntaxError(offset: reader.offset, reason: "data follows the page") }
            return (changes, next, more)
        }
        guard let changes = read.changes else { throw JSONReader.FieldError(reason: "changes is missing") }
        guard let next = read.next else { throw JSONReader.FieldError(reason: "next_cursor is missing") }
        guard let more = read.more else { throw JSONReader.FieldError(reason: "has_more is missing") }
        self.changes = changes
        self.nextCursor = next
        self.hasMore = more
    }
}

/// One change of a page. A change whose fields are missing or mistyped becomes `.unreadable`
/// with its reason, so one bad item drops only itself; only broken JSON fails the page.
struct APIChange {
    enum Body {
        case upsert(APIPost)
        case delete(id: String)
        case unreadable(id: String?, reason: String)
    }

    var body: Body

    init(reading reader: inout JSONReader) throws {
        let start = reader.offset
        var seenID: String?
        do {
            body = try Self.readBody(&reader, id: &seenID)
        } catch let error as JSONReader.FieldError {
            // Skip the rest of this change as plain JSON; a syntax error there fails the page.
            reader.rewind(to: start)
            try reader.skipValue()
            body = .unreadable(id: seenID, reason: error.reason)
        }
    }

    private static func readBody(_ reader: inout JSONReader, id seenID: inout String?) throws -> Body {
        guard try reader.peek() == UInt8(ascii: "{") else {
            throw JSONReader.FieldError(reason: "the change is not of the expected type")
        }
        var op: String?, post: APIPost?, id: String?
        try reader.readObject { reader, key in
            switch key {
            case "op": op = try reader.string("op")
            case "id":
                id = try reader.optionalString("id")
                if let id { seenID = id }
            case "post": post = try APIPost(reading: &reader, id: &seenID)
            default: try reader.skipValue()
            }
        }
        switch op {
        case "upsert":
            guard let post else { throw JSONReader.FieldError(reason: "post is missing") }
            return .upsert(post)
        case "delete":
            guard let id else { throw JSONReader.FieldError(reason: "id is missing") }
            return .delete(id: id)
        case let op?:
            return .unreadable(id: seenID, reason: "unknown op \"\(op)\"")
        case nil:
            throw JSONReader.FieldError(reason: "op is missing")
        }
    }
}

extension FeedPage {
    /// Maps a wire page, dropping each change that cannot be read into `skipped`.
    ///
    /// - Parameter validator: the response's `ETag`, kept with the cursor for the next poll.
    /// - Throws: ``ServiceError`` `.invalidResponse` when the page has no usable cursor.
    init(_ dto: APIFeedResponse, validator: String?) throws {
        guard !dto.nextCursor.isEmpty else {
            throw ServiceError(.invalidResponse, "reading a feed page", "next_cursor is empty")
        }
        // A cursor goes back to the server and into the store: a few hundred bytes, not a payload.
        guard dto.nextCursor.utf8.count <= 1_024 else {
            throw ServiceError(.contractViolation, "reading a feed page", "next_cursor is \(dto.nextCursor.utf8.count) bytes long, more than 1024")
        }
        // The ETag comes back in If-None-Match: one that could split a header is neither stored nor sent.
        let validator = try validator.map { try HeaderValue.check($0, "ETag", "reading a feed page", allowsSpace: true) }
        var changes: [FeedChange] = []
        var skipped: [SkippedItem] = []
        var authors: [APIPost.Author: User] = [:]
        changes.reserveCapacity(dto.changes.count)
        for change in dto.changes {
            switch change.body {
            case .upsert(let post):
                do {
                    changes.append(.upsert(try Post(post, authors: &authors)))
                } catch let error as ServiceError {
                    skipped.append(SkippedItem(id: post.id.isEmpty ? nil : post.id, reason: error.reason,
                                               postID: post.id.isEmpty ? nil : PostID(post.id)))
                }
            case .delete(let id) where id.isEmpty:
                // Without its id, a full walk cannot tell which post this change concerns, so it sweeps nothing.
                skipped.append(SkippedItem(id: nil, reason: "a delete has an empty id"))
            case .delete(let id):
                changes.append(.delete(PostID(id)))
            case .unreadable(let id, let reason):
                // The id a change names counts as listed, whatever its op: a walk keeps that post rather than guess.
                skipped.append(SkippedItem(id: id, reason: reason, postID: id.flatMap { $0.isEmpty ? nil : PostID($0) }))
            }
        }
        self.init(changes: changes, skipped: skipped,
                  nextCursor: FeedCursor(position: dto.nextCursor, validator: validator), hasMore: dto.hasMore)
    }
}
