import Core
import Foundation

/// The item calls: ids and contents of a stream, contents of given ids, unread counts, and the
/// marks (edit-tag, mark-all-as-read), all over the store's own read marks and stars.
extension ReaderAPIService {
    /// The feeds served, by name, with their groups.
    var groups: [String: String?] { Dictionary(context.feeds.map { ($0.name, $0.group) }, uniquingKeysWith: { first, _ in first }) }

    /// One page of a stream: the served posts with their item ids (each hashed once, here), and
    /// the continuation when more may follow.
    func page(_ request: StreamRequest) async throws -> (posts: [StoredPost], ids: [ItemID], continuation: String?) {
        try await page(request, position: \.listingPosition) { try await context.store.posts(matching: $0) }
    }

    /// One page of a stream as `read` reads it (posts whole, or their positions alone), the
    /// served ones kept and learnt by the item index, with their ids and the continuation.
    func page<Item>(_ request: StreamRequest, position: (Item) -> StoredPost.ListingPosition,
                    read: (PostQuery) async throws -> [Item]) async throws -> (posts: [Item], ids: [ItemID], continuation: String?) {
        let items: [Item]
        if let feeds = request.feeds {
            // One page of several feeds' listing: each feed's page after the same position (the
            // order is one order across feeds: time, feed, id; or its reverse), merged, the first `limit` kept.
            let query = request.query
            var all: [Item] = []
            for feed in feeds {
                var each = query
                each.feed = feed
                all += try await read(each)
            }
            all.sort { query.oldestFirst ? position($1).isBefore(position($0)) : position($0).isBefore(position($1)) }
            items = Array(all.prefix(query.limit))
        } else {
            items = try await read(request.query)
        }
        let groups = self.groups
        let served = items.filter { groups[position($0).feed] != nil }
        let positions = served.map(position)
        let ids = positions.map { ItemID(feed: $0.feed, post: $0.id) }
        await index.learn(positions, ids: ids)
        let more = items.count == request.query.limit
            ? items.last.map { Continuation.make(position($0), oldestFirst: request.query.oldestFirst) } : nil
        return (served, ids, more)
    }

    func itemIDs(_ fields: FormFields) async throws -> ServedResponse {
        let request: StreamRequest
        switch StreamRequest.parse(fields, stream: nil, feeds: context.feeds, defaultCount: 20) {
        case .success(let parsed): request = parsed
        case .failure(let error): return .text(400, error.line + "\n")
        }
        // Ids and times alone: no post is read whole for a list of ids.
        let (positions, ids, continuation) = try await page(request, position: { $0 }) { try await context.store.positions(matching: $0) }
        return json { json in
            json.openObject()
            json.key("itemRefs")
            json.openArray()
            for (position, id) in zip(positions, ids) {
                json.openObject()
                json.string("id", id.short)
                json.key("directStreamIds")
                json.openArray()
                json.closeArray()
                json.string("timestampUsec", String(Int64((position.createdAt.timeIntervalSince1970 * 1_000_000).rounded())))
                json.closeObject()
            }
            json.closeArray()
            json.string("continuation", continuation)
            json.closeObject()
        }
    }

    func streamContents(_ fields: FormFields, stream: String?) async throws -> ServedResponse {
        let request: StreamRequest
        switch StreamRequest.parse(fields, stream: stream, feeds: context.feeds, defaultCount: 20) {
        case .success(let parsed): request = parsed
        case .failure(let error): return .text(400, error.line + "\n")
        }
        guard request.query.limit <= 1_000 else { return .text(400, "n is at most 1000 for contents\n") }
        let (posts, ids, continuation) = try await page(request)
        return items(posts, ids: ids, id: request.streamID, continuation: continuation)
    }

    func itemContents(_ fields: FormFields) async throws -> ServedResponse {
        let texts = fields.all("i")
        guard !texts.isEmpty, texts.count <= 1_000 else { return .text(400, "give 1 to 1000 item ids as i=\n") }
        var ids: [ItemID] = []
        for text in texts {
            guard let id = ItemID(parsing: text) else { return .text(400, "i=\(StreamRequest.shown(text)) is not an item id\n") }
            ids.append(id)
        }
        let found = try await index.resolve(ids, feeds: context.feeds.map(\.name), store: context.store)
        var posts: [StoredPost] = []
        var known: [ItemID] = []
        for id in ids {
            guard let entry = found[id], let stored = try await post(entry) else { continue }
            posts.append(stored)
            known.append(id)
        }
        return items(posts, ids: known, id: "user/-/state/com.google/reading-list", continuation: nil)
    }

    /// The stored post an index entry names, read again (its marks as they are now).
    func post(_ entry: ItemIndex.Entry) async throws -> StoredPost? {
        // Every post of that instant in its feed, by id: few, and one of them is it.
        let query = PostQuery(feed: entry.feed, limit: 1_000, since: entry.createdAt, stable: true,
                              after: StoredPost.Position(createdAt: entry.createdAt.addingTimeInterval(0.0005), id: ""))
        return try await context.store.posts(matching: query).first { $0.post.id == entry.post }
    }

    private func items(_ posts: [StoredPost], ids: [ItemID], id: String, continuation: String?) -> ServedResponse {
        let groups = self.groups
        return json { json in
            json.openObject()
            json.string("id", id)
            json.int("updated", Int64(Date().timeIntervalSince1970))
            json.key("items")
            json.openArray()
            for (stored, itemID) in zip(posts, ids) { GReaderJSON.item(stored, id: itemID, group: groups[stored.feed] ?? nil, to: &json) }
            json.closeArray()
            json.string("continuation", continuation)
            json.closeObject()
        }
    }
}
