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
        let posts: [StoredPost]
        if let feeds = request.feeds {
            posts = try await merged(request.query, of: feeds)
        } else {
            posts = try await context.store.posts(matching: request.query)
        }
        let groups = self.groups
        let served = posts.filter { groups[$0.feed] != nil }
        let ids = served.map { ItemID(feed: $0.feed, post: $0.post.id) }
        await index.learn(served, ids: ids)
        let more = posts.count == request.query.limit
            ? posts.last.map { Continuation.make($0.listingPosition, oldestFirst: request.query.oldestFirst) } : nil
        return (served, ids, more)
    }

    /// One page of several feeds' listing: each feed's page after the same position (the order
    /// is one order across feeds: time, feed, id; or its reverse), merged, the first `limit` kept.
    func merged(_ query: PostQuery, of feeds: [String]) async throws -> [StoredPost] {
        var all: [StoredPost] = []
        for feed in feeds {
            var each = query
            each.feed = feed
            all += try await context.store.posts(matching: each)
        }
        all.sort { query.oldestFirst ? $1.listingPosition.isBefore($0.listingPosition) : $0.listingPosition.isBefore($1.listingPosition) }
        return Array(all.prefix(query.limit))
    }

    func itemIDs(_ fields: FormFields) async throws -> ServedResponse {
        let request: StreamRequest
        switch StreamRequest.parse(fields, stream: nil, feeds: context.feeds, defaultCount: 20) {
        case .success(let parsed): request = parsed
        case .failure(let error): return .text(400, error.line + "\n")
        }
        let (posts, ids, continuation) = try await page(request)
        return json { json in
            json.openObject()
            json.key("itemRefs")
            json.openArray()
            for (stored, id) in zip(posts, ids) {
                json.openObject()
                json.string("id", id.short)
                json.key("directStreamIds")
                json.openArray()
                json.closeArray()
                json.string("timestampUsec", String(Int64((stored.post.createdAt.timeIntervalSince1970 * 1_000_000).rounded())))
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
