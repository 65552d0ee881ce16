import Core
import Foundation
import IntegrationKit

/// Reads a Bluesky timeline page by page, newest first, with the server's opaque cursor.
///
/// The first sync walks back until `maxPosts` items, the `since` date, or the timeline's end.
/// Later syncs start at the top again, since the API cannot walk forward, and keep what is
/// newer than the watermark (the newest sort time stored). They stop at the first page whose
/// items are all at or before the watermark: that page is the one page of overlap, and
/// walking on until it comes leaves no gap, however many pages arrived in between.
///
/// An item's sort time is when it entered the timeline: a repost's `indexedAt`, or for a post
/// the earlier of its `indexedAt` and `createdAt` (as the AppView sorts, so a post dated in
/// the future does not stay on top). A repost of an old post is thus new.
struct BlueskyPostService: PostService {
    let client: BlueskyClient
    let timeline: BlueskyTimeline
    let filter: String?
    /// Who logs in: the `likes` timeline lists this account's likes when the token names no DID.
    let identifier: String
    let pageSize: Int
    let maxPosts: Int?
    let since: Date?
    /// The next page of a walk back, fetched while this one is mapped.
    var readAhead = ReadAhead<HTTPResponse>()

    func page(after cursor: FeedCursor?, session: Session?) async throws -> FeedPage {
        let operation = "reading the timeline from"
        let state = try cursor.map { cursor in
            guard let state = BlueskyCursor(cursor) else {
                throw ServiceError(.invalidRequest, "resuming the sync of \(client.origin.host)",
                                   "the stored cursor was not written by the Bluesky integration; run `feedsync pull --full`")
            }
            return state
        }
        guard let token = session?.accessToken else {
            throw ServiceError(.unauthorized, "\(operation) \(client.origin.host)", "there is no session to send")
        }
        let parameters: [URLQueryItem]
        switch state {
        case .backfill(_, _, let next)?, .catchUp(_, _, let next)?: parameters = try self.parameters(token, cursor: next)
        case nil, .idle?: parameters = try self.parameters(token, cursor: nil)
        }
        let response: HTTPResponse
        if let answer = try await readAhead.answer(for: Self.readAheadKey(parameters, token)) {
            response = answer
        } else {
            response = try await client.query(timeline.method, parameters, token: token, operation)
        }
        let page: BlueskyFeedResponse
        do {
            page = try BlueskyFeedResponse(body: response.body, barePosts: timeline.listsBarePosts)
        } catch let error as JSONReader.FieldError {
            throw ServiceError(.invalidResponse, "\(operation) \(client.origin.host)", error.reason)
        } catch let error as JSONReader.TooDeepError {
            throw ServiceError(.contractViolation, "\(operation) \(client.origin.host)", error.reason)
        } catch {
            throw ServiceError(.invalidResponse, "\(operation) \(client.origin.host)", "the body is not JSON")
        }
        var next: String?
        if let cursor = page.cursor, !cursor.isEmpty {
            guard BlueskyCursor.isServerCursor(cursor) else {
                throw ServiceError(.contractViolation, "\(operation) \(client.origin.host)",
                                   "the cursor is \(cursor.utf8.count) bytes long or not printable ASCII; at most \(BlueskyCursor.maxServerCursorBytes) are kept")
            }
            next = cursor
        }
        try await readAhead(after: page, next: next, of: state, token: token)
        let read = Self.read(page)

        switch state {
        case nil, .idle(nil)?, .backfill?:
            var (fetched, top) = (0, Int64?.none)
            if case .backfill(let count, let seen, _)? = state { (fetched, top) = (count, seen) }
            top = [top, read.newest].compactMap { $0 }.max()
            // Newest first on the wire; keep what the bounds allow.
            var kept = read.entries
            if let since { kept = kept.filter { $0.time >= since } }
            if let maxPosts { kept = Array(kept.prefix(max(0, maxPosts - fetched))) }
            fetched += kept.count
            let reachedBound = kept.count < read.entries.count || (maxPosts.map { fetched >= $0 } ?? false)
            if let next, !page.entries.isEmpty, !reachedBound {
                return Self.page(kept, skipped: read.skipped.map(\.item), next: .backfill(fetched: fetched, top: top, next: next), hasMore: true)
            }
            return Self.page(kept, skipped: read.skipped.map(\.item), next: .idle(watermark: top), hasMore: false)
        case .idle(let watermark?)?, .catchUp(let watermark, _, _)?:
            var top: Int64?
            if case .catchUp(_, let seen, _)? = state { top = seen }
            top = [top, read.newest].compactMap { $0 }.max()
            let fresh = read.entries.filter { BlueskyCursor.microseconds($0.time) > watermark }
            // A skipped item is reported while it is above the watermark; one without a time,
            // on pages that bring something new (not on every sync's overlap page).
            let skipped = read.skipped.filter { ($0.time.map(BlueskyCursor.microseconds) ?? (fresh.isEmpty ? .min : .max)) > watermark }.map(\.item)
            // Every item at or before the watermark: this page overlaps what is stored.
            let overlaps = fresh.isEmpty && read.skipped.allSatisfy { ($0.time.map(BlueskyCursor.microseconds) ?? .min) <= watermark }
            if let next, !page.entries.isEmpty, !overlaps {
                return Self.page(fresh, skipped: skipped, next: .catchUp(watermark: watermark, top: top, next: next), hasMore: true)
            }
            return Self.page(fresh, skipped: skipped, next: .idle(watermark: max(watermark, top ?? watermark)), hasMore: false)
        }
    }

    /// The query of a timeline page: the one after `cursor`, or the newest.
    private func parameters(_ token: Secret, cursor: String?) throws -> [URLQueryItem] {
        var parameters = timeline.parameters(filter: filter, viewer: try viewer(token))
        parameters.append(URLQueryItem(name: "limit", value: String(pageSize)))
        if let cursor { parameters.append(URLQueryItem(name: "cursor", value: cursor)) }
        return parameters
    }

    /// A request made ahead answers only the same query with the same token.
    private static func readAheadKey(_ parameters: [URLQueryItem], _ token: Secret) -> String {
        "\(token.revealed.hashValue) \(parameters.map { "\($0.name)=\($0.value ?? "")" }.joined(separator: "&"))"
    }

    /// Fetches the page after `page` while it is mapped, when it is a walk back's and cannot be
    /// the walk's last for a bound: with a `since` date, or `maxPosts` within the page, it may
    /// be. A later sync's walk most often ends at its first page, so none is fetched ahead there.
    private func readAhead(after page: BlueskyFeedResponse, next: String?, of state: BlueskyCursor?, token: Secret) async throws {
        guard let next, !page.entries.isEmpty, since == nil else { return }
        let fetched: Int
        switch state {
        case nil, .idle(nil)?: fetched = 0
        case .backfill(let count, _, _)?: fetched = count
        case .idle?, .catchUp?: return
        }
        if let maxPosts, fetched + page.entries.count >= maxPosts { return }
        let parameters = try self.parameters(token, cursor: next)
        await readAhead.start(Self.readAheadKey(parameters, token)) { [client, timeline] in
            try await client.query(timeline.method, parameters, token: token, "reading the timeline from")
        }
    }

    /// The account whose likes `likes` lists: the DID the access token names, else the
    /// identifier when it is a handle or DID (not an email address).
    private func viewer(_ token: Secret) throws -> String? {
        guard timeline == .likes else { return nil }
        if let did = BlueskyJWT.subject(of: token.revealed) { return did }
        if BlueskyIdentifier.isDID(identifier) || BlueskyIdentifier.isHandle(identifier) { return identifier }
        throw ServiceError(.invalidRequest, "reading the likes of \(identifier)",
                           "the session names no account; set identifier to the account's handle to mirror its likes")
    }

    /// A page's items mapped, each with its sort time, and the ones that could not be read.
    struct Read {
        var entries: [(post: Post, video: Video?, time: Date)] = []
        var skipped: [(item: SkippedItem, time: Date?)] = []
        /// The newest sort time among the items (pinned ones aside).
        var newest: Int64?
    }

    static func read(_ page: BlueskyFeedResponse) -> Read {
        var read = Read()
        read.entries.reserveCapacity(page.entries.count)
        var authors: [BlueskyProfile: User] = [:]
        for entry in page.entries {
            switch entry {
            case .unreadable(let id, let postID, let reason):
                read.skipped.append((SkippedItem(id: id, reason: reason, postID: postID), nil))
            case .item(let item):
                let time = sortTime(item)
                if let time, !item.pinned { read.newest = max(read.newest ?? .min, BlueskyCursor.microseconds(time)) }
                do {
                    let post = try Post(item, authors: &authors)
                    guard let time else { throw ServiceError(.invalidItem, "reading post \(item.post.uri)", "it has no time to sort by") }
                    let video = try item.post.embed?.video()
                    // A pinned post sits on top out of time order; it is kept, but never moves the watermark.
                    read.entries.append((post, video, item.pinned ? .distantPast : time))
                } catch {
                    read.skipped.append((SkippedItem(item.post, storedAs: item.postID, error), time))
                }
            }
        }
        return read
    }

    /// When an item entered the timeline: a repost's `indexedAt`; a post's earlier of
    /// `indexedAt` and `createdAt`.
    static func sortTime(_ item: BlueskyFeedItem) -> Date? {
        if let repost = item.repost { return RFC3339.date(from: repost.indexedAt) }
        let indexed = RFC3339.date(from: item.post.indexedAt)
        let created = item.post.record.createdAt.flatMap(RFC3339.date(from:))
        guard let indexed, let created else { return indexed ?? created }
        return min(indexed, created)
    }

    private static func page(_ entries: [(post: Post, video: Video?, time: Date)], skipped: [SkippedItem],
                             next: BlueskyCursor, hasMore: Bool) -> FeedPage {
        var seen = Set<VideoID>()
        let videos = entries.compactMap(\.video).filter { seen.insert($0.id).inserted }
        let cursor = next.feedCursor
        var request: String?
        if case .backfill(_, _, let server) = next { request = "cursor \(server)" }
        if case .catchUp(_, _, let server) = next { request = "cursor \(server)" }
        // A timeline is bounded (by maxPosts, since, or the server's own cut-off) and forgets
        // deleted posts, so a post not seen is not known to be deleted.
        return FeedPage(changes: entries.reversed().map { .upsert($0.post) }, skipped: skipped, nextCursor: cursor,
                        hasMore: hasMore, missingMeansDeleted: false, videos: videos, nextRequest: request)
    }
}
