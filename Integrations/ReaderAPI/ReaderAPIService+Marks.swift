import Core
import Foundation

/// The writes: `edit-tag` (read, unread, starred) and `mark-all-as-read`, and `unread-count`.
/// Marks are the store's own, the same ones `feedsync read` and `star` set.
extension ReaderAPIService {
    /// `edit-tag`: `a=` adds and `r=` removes `read` or `starred` on each `i=`. Ids that name no
    /// stored post change nothing: when none does, 400 says so; when some do, the answer is
    /// `OK` with `X-Feedsync-Unknown-Items` counting the others.
    func editTag(_ fields: FormFields) async throws -> ServedResponse {
        let texts = fields.all("i")
        guard !texts.isEmpty, texts.count <= 1_000 else { return .text(400, "give 1 to 1000 item ids as i=\n") }
        var changes: [(tag: String, on: Bool)] = fields.all("a").map { ($0, true) } + fields.all("r").map { ($0, false) }
        changes = changes.filter { $0.tag != StreamRequest.reading }
        guard !changes.isEmpty else { return .text(400, "give a tag to add (a=) or remove (r=)\n") }
        for change in changes where change.tag != StreamRequest.read && change.tag != StreamRequest.starred {
            return .text(400, "the tag \(StreamRequest.shown(change.tag)) is not served: only \(StreamRequest.read) and \(StreamRequest.starred)\n")
        }
        var ids: [ItemID] = []
        for text in texts {
            guard let id = ItemID(parsing: text) else { return .text(400, "i=\(StreamRequest.shown(text)) is not an item id\n") }
            ids.append(id)
        }
        let found = try await index.resolve(ids, feeds: context.feeds.map(\.name), store: context.store)
        guard !found.isEmpty else { return .text(400, "none of the \(ids.count) item ids names a stored post; nothing changed\n") }
        for entry in found.values {
            for change in changes {
                if change.tag == StreamRequest.read {
                    _ = try await context.store.setRead(change.on, postID: entry.post, inFeed: entry.feed)
                } else {
                    _ = try await context.store.setStarred(change.on, postID: entry.post, inFeed: entry.feed)
                }
            }
        }
        let unknown = Set(ids).count - found.count
        return .text(200, "OK", headers: unknown > 0 ? [("X-Feedsync-Unknown-Items", "\(unknown)")] : [])
    }

    /// `mark-all-as-read`: every unread post of the stream (`s`) at or before `ts` (microseconds;
    /// now when absent) is marked read.
    func markAllAsRead(_ fields: FormFields) async throws -> ServedResponse {
        guard let stream = fields["s"] else { return .text(400, "give the stream as s=\n") }
        let limited = FormFields([("s", stream)])
        let request: StreamRequest
        switch StreamRequest.parse(limited, stream: nil, feeds: context.feeds, defaultCount: 1_000) {
        case .success(let parsed): request = parsed
        case .failure(let error): return .text(400, error.line + "\n")
        }
        var until = Date()
        if let text = fields["ts"] {
            guard text.count <= 20, let microseconds = Int64(text), microseconds >= 0 else {
                return .text(400, "ts=\(StreamRequest.shown(text)) is not a time in microseconds since 1970\n")
            }
            until = Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
        }
        var query = request.query
        query.unreadOnly = true
        query.limit = 1_000
        // Each page is read after the last one's marks, so the unread listing moves on by itself.
        var marked = 0
        let groups = self.groups
        while marked < 10_000_000 {
            let posts = try await context.store.posts(matching: query).filter { groups[$0.feed] != nil && $0.post.createdAt <= until }
            guard !posts.isEmpty else { break }
            for stored in posts { _ = try await context.store.setRead(true, postID: stored.post.id, inFeed: stored.feed) }
            marked += posts.count
            query.continuing = posts.last?.listingPosition
        }
        return .text(200, "OK")
    }

    /// `unread-count`: per served feed, its unread posts (counted up to `max`, 1000).
    func unreadCount() async throws -> ServedResponse {
        var counts: [(String, Int, Date?)] = []
        for feed in context.feeds {
            let unread = try await context.store.posts(matching: PostQuery(feed: feed.name, limit: 1_000, unreadOnly: true))
            counts.append((feed.name, unread.count, unread.first?.post.createdAt))
        }
        return json { json in
            json.openObject()
            json.int("max", 1_000)
            json.key("unreadcounts")
            json.openArray()
            for (feed, count, newest) in counts {
                json.openObject()
                json.string("id", GReaderJSON.streamID(of: feed))
                json.int("count", count)
                json.string("newestItemTimestampUsec", String(Int64(((newest ?? Date(timeIntervalSince1970: 0)).timeIntervalSince1970 * 1_000_000).rounded())))
                json.closeObject()
            }
            json.closeArray()
            json.closeObject()
        }
    }
}
