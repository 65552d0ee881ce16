import Core
import Foundation

/// A page of `GET /v1/feed` (see API.md, "The feed").
struct APIFeedResponse: Decodable {
    var changes: [APIChange]
    var next_cursor: String
    var has_more: Bool
}

/// One change of a page. Decoding never fails: an unreadable change becomes `.unreadable`
/// with its reason, so one bad item drops only itself.
struct APIChange: Decodable {
    enum Body {
        case upsert(APIPost)
        case delete(id: String)
        case unreadable(id: String?, reason: String)
    }

    var body: Body

    private enum Keys: String, CodingKey { case op, post, id }
    private enum PostKeys: String, CodingKey { case id }

    init(from decoder: any Decoder) {
        do {
            let container = try decoder.container(keyedBy: Keys.self)
            let op = try container.decode(String.self, forKey: .op)
            switch op {
            case "upsert": body = .upsert(try container.decode(APIPost.self, forKey: .post))
            case "delete": body = .delete(id: try container.decode(String.self, forKey: .id))
            default: body = .unreadable(id: Self.id(in: decoder), reason: "unknown op \"\(op)\"")
            }
        } catch {
            body = .unreadable(id: Self.id(in: decoder), reason: Self.describe(error, below: decoder.codingPath.count))
        }
    }

    /// The change's id, when it can be found at all, for the skip report.
    private static func id(in decoder: any Decoder) -> String? {
        guard let container = try? decoder.container(keyedBy: Keys.self) else { return nil }
        if let id = try? container.decode(String.self, forKey: .id) { return id }
        return try? container.nestedContainer(keyedBy: PostKeys.self, forKey: .post).decode(String.self, forKey: .id)
    }

    /// A phrase for a decoding error, naming the field by its path inside the change.
    private static func describe(_ error: any Error, below depth: Int) -> String {
        func path(_ context: DecodingError.Context, _ key: (any CodingKey)? = nil) -> String {
            let keys = context.codingPath.dropFirst(depth).map(\.stringValue) + (key.map { [$0.stringValue] } ?? [])
            return keys.isEmpty ? "the change" : keys.joined(separator: ".")
        }
        switch error {
        case DecodingError.keyNotFound(let key, let context): return "\(path(context, key)) is missing"
        case DecodingError.valueNotFound(_, let context): return "\(path(context)) is null"
        case DecodingError.typeMismatch(let type, let context): return "\(path(context)) is not \(type == String.self ? "a string" : "of the expected type")"
        case DecodingError.dataCorrupted(let context): return "\(path(context)) is malformed"
        default: return "it cannot be read"
        }
    }
}

extension FeedPage {
    /// Maps a wire page, dropping each change that cannot be read into `skipped`.
    ///
    /// - Parameter validator: the response's `ETag`, kept with the cursor for the next poll.
    /// - Throws: ``ServiceError`` `.invalidResponse` when the page has no usable cursor.
    init(_ dto: APIFeedResponse, validator: String?) throws {
        guard !dto.next_cursor.isEmpty else {
            throw ServiceError(.invalidResponse, "reading a feed page", "next_cursor is empty")
        }
        var changes: [FeedChange] = []
        var skipped: [SkippedItem] = []
        changes.reserveCapacity(dto.changes.count)
        for change in dto.changes {
            switch change.body {
            case .upsert(let post):
                do {
                    changes.append(.upsert(try Post(post)))
                } catch let error as ServiceError {
                    skipped.append(SkippedItem(id: post.id.isEmpty ? nil : post.id, reason: error.reason))
                }
            case .delete(let id) where id.isEmpty:
                skipped.append(SkippedItem(id: nil, reason: "a delete has an empty id"))
            case .delete(let id):
                changes.append(.delete(PostID(id)))
            case .unreadable(let id, let reason):
                skipped.append(SkippedItem(id: id, reason: reason))
            }
        }
        self.init(changes: changes, skipped: skipped,
                  nextCursor: FeedCursor(position: dto.next_cursor, validator: validator), hasMore: dto.has_more)
    }
}
