import Core
import Foundation

/// Reads a Mastodon timeline page by page, following the server's `Link` header.
///
/// The first sync starts at the newest status and walks back until `maxPosts` statuses or the
/// `since` date (or the timeline's end). Later syncs walk forward from the newest stored
/// status with the server's `min_id` links, so they fetch only what is new, without gaps.
struct MastodonPostService: PostService {
    let client: MastodonClient
    let timeline: MastodonTimeline
    let pageSize: Int
    let maxPosts: Int?
    let since: Date?
    let accounts: AccountLookup

    func page(after cursor: FeedCursor?, session: Session?) async throws -> FeedPage {
        let state = try cursor.map { cursor in
            guard let state = MastodonCursor(cursor) else {
                throw ServiceError(.invalidRequest, "resuming the sync of \(client.server.host ?? "")",
                                   "the stored cursor was not written by the Mastodon integration; run `feedsync pull --full`")
            }
            return state
        }
        let url: URL
        switch state {
        case nil: url = client.url(timeline.path(accountID: try await accounts.id(for: timeline)), query: [URLQueryItem(name: "limit", value: String(pageSize))])
        case .backfill(_, _, let next)?: url = withLimit(next)
        case .forward(let forward)?: url = Self.walkingForward(withLimit(forward))
        }
        let response = try await client.get(url, "reading the timeline from")
        let items: [LossyStatus]
        do {
            items = try JSONDecoder().decode([LossyStatus].self, from: response.body)
        } catch {
            throw ServiceError(.invalidResponse, "reading the timeline from \(client.server.host ?? "")", "the body is not a list of statuses")
        }
        var posts: [Post] = []
        var skipped: [SkippedItem] = []
        // The statuses carry their videos' metadata; the page hands it to the sync with them.
        var videos: [VideoID: Video] = [:]
        for item in items {
            guard let status = item.status else {
                skipped.append(SkippedItem(id: item.id, reason: item.reason ?? "it cannot be read"))
                continue
            }
            do {
                posts.append(try Post(status))
                for video in try (status.reblog?.value ?? status).media_attachments?.compactMap(Video.init) ?? [] { videos[video.id] = video }
            } catch let error as ServiceError {
                skipped.append(SkippedItem(id: status.id, reason: error.reason))
            }
        }

        switch state {
        case nil, .backfill?:
            var fetched = 0
            var forward = response.previous
            if case .backfill(let count, let stored, _)? = state { (fetched, forward) = (count, stored) }
            if state == nil && forward == nil {
                // An empty timeline: next time, start from its very beginning (everything newer than 0).
                forward = client.url(timeline.path(accountID: try await accounts.id(for: timeline)), query: [URLQueryItem(name: "min_id", value: "0")])
            }
            // Newest first on the wire; keep what the bounds allow.
            var kept = posts
            if let since { kept = kept.filter { $0.createdAt >= since } }
            if let maxPosts { kept = Array(kept.prefix(max(0, maxPosts - fetched))) }
            fetched += kept.count
            let reachedBound = kept.count < posts.count || (maxPosts.map { fetched >= $0 } ?? false)
            let changes = kept.reversed().map(FeedChange.upsert)
            let carried = Self.videos(of: kept, from: videos)
            if let next = response.next, !items.isEmpty, !reachedBound {
                return FeedPage(changes: changes, skipped: skipped,
                                nextCursor: MastodonCursor.backfill(fetched: fetched, forward: forward, next: next).feedCursor, hasMore: true,
                                videos: carried, nextRequest: next.absoluteString)
            }
            // A timeline is bounded (by maxPosts, since, or the server's own cut-off) and forgets
            // deleted statuses, so a status not seen is not known to be deleted.
            return FeedPage(changes: changes, skipped: skipped, nextCursor: MastodonCursor.forward(forward ?? url).feedCursor,
                            hasMore: false, missingMeansDeleted: false, videos: carried)
        case .forward(let forward)?:
            guard !items.isEmpty, let previous = response.previous else {
                return FeedPage(changes: [], skipped: skipped, nextCursor: MastodonCursor.forward(forward).feedCursor, hasMore: false)
            }
            // A short page means the top of the timeline has been reached.
            return FeedPage(changes: posts.reversed().map(FeedChange.upsert), skipped: skipped,
                            nextCursor: MastodonCursor.forward(previous).feedCursor, hasMore: items.count >= pageSize,
                            videos: Self.videos(of: posts, from: videos))
        }
    }

    /// The videos of `posts`, in order of first mention.
    private static func videos(of posts: [Post], from known: [VideoID: Video]) -> [Video] {
        var seen = Set<VideoID>()
        return posts.flatMap(\.videoIDs).filter { seen.insert($0).inserted }.compactMap { known[$0] }
    }

    /// A forward link that pages by `min_id`. Some servers (Mastodon's bookmarks and favourites)
    /// put `since_id` in `rel="prev"`, which returns the newest page and so would skip statuses
    /// when more than a page arrived; the same id as `min_id` returns the page right after it.
    static func walkingForward(_ url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let items = components.queryItems, !items.contains(where: { $0.name == "min_id" }),
              items.contains(where: { $0.name == "since_id" }) else { return url }
        components.queryItems = items.map { $0.name == "since_id" ? URLQueryItem(name: "min_id", value: $0.value) : $0 }
        return components.url ?? url
    }

    /// The server's link with our page size (servers do not always carry `limit` over).
    private func withLimit(_ url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        var items = (components.queryItems ?? []).filter { $0.name != "limit" }
        items.append(URLQueryItem(name: "limit", value: String(pageSize)))
        components.queryItems = items
        return components.url ?? url
    }
}

/// A status that decodes, or the id and reason of one that does not, so one bad status drops
/// only itself.
struct LossyStatus: Decodable {
    var status: MastodonStatus?
    var id: String?
    var reason: String?

    private enum Keys: String, CodingKey { case id }

    init(from decoder: any Decoder) throws {
        do {
            status = try MastodonStatus(from: decoder)
            id = status?.id
        } catch {
            id = try? decoder.container(keyedBy: Keys.self).decode(String.self, forKey: .id)
            if case DecodingError.keyNotFound(let key, _) = error {
                reason = "\(key.stringValue) is missing"
            } else if case DecodingError.typeMismatch(_, let context) = error {
                // Array positions ("Index 2") say nothing to a reader; the field names do.
                let path = context.codingPath.filter { $0.intValue == nil }.map(\.stringValue).joined(separator: ".")
                reason = "\(path.isEmpty ? "the status" : path) has the wrong type"
            } else {
                reason = "it cannot be read"
            }
        }
    }
}

/// Looks an `@acct` up to its account id once per run.
actor AccountLookup {
    private let client: MastodonClient
    private var known: [String: String] = [:]

    init(client: MastodonClient) { self.client = client }

    func id(for timeline: MastodonTimeline) async throws -> String? {
        guard case .accountNamed(let acct) = timeline else { return nil }
        if let id = known[acct] { return id }
        let response = try await client.get(client.url("/api/v1/accounts/lookup", query: [URLQueryItem(name: "acct", value: acct)]),
                                            "looking up @\(acct) on")
        guard let account = try? JSONDecoder().decode(MastodonAccount.self, from: response.body) else {
            throw ServiceError(.invalidResponse, "looking up @\(acct)", "the answer is not an account")
        }
        known[acct] = account.id
        return account.id
    }
}
