import Core
import Foundation
import IntegrationKit

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
    /// The next page of a walk back, fetched while this one is mapped.
    var readAhead = ReadAhead<MastodonClient.Response>()

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
        case nil: url = client.url(timeline.path(accountID: try await accounts.id(for: timeline)),
                                      query: timeline.query + [URLQueryItem(name: "limit", value: String(pageSize))])
        case .backfill(_, _, let next)?: url = withLimit(next)
        case .forward(let forward)?: url = Self.walkingForward(withLimit(forward))
        }
        let response: MastodonClient.Response
        if let answer = try await readAhead.answer(for: url.absoluteString) {
            response = answer
        } else {
            response = try await client.get(url, "reading the timeline from")
        }
        let page: MastodonTimelineResponse
        do {
            page = try MastodonTimelineResponse(body: response.body)
        } catch let error as JSONReader.TooDeepError {
            throw ServiceError(.contractViolation, "reading the timeline from \(client.server.host ?? "")", error.reason)
        } catch let error as JSONReader.SyntaxError {
            throw ServiceError(.invalidResponse, "reading the timeline from \(client.server.host ?? "")",
                               "the body is not JSON (\(error.reason) at byte \(error.offset))")
        } catch {
            throw ServiceError(.invalidResponse, "reading the timeline from \(client.server.host ?? "")", "the body is not a list of statuses")
        }
        // Once the page is read: a page that cannot be read ends the walk.
        if !page.items.isEmpty { await readAhead(after: response, holding: page.items.count, of: state) }
        let (posts, skipped, videos) = page.mapped()

        switch state {
        case nil, .backfill?:
            var fetched = 0
            var forward = response.previous
            if case .backfill(let count, let stored, _)? = state { (fetched, forward) = (count, stored) }
            if state == nil && forward == nil {
                // An empty timeline: next time, start from its very beginning (everything newer than 0).
                forward = client.url(timeline.path(accountID: try await accounts.id(for: timeline)),
                                     query: timeline.query + [URLQueryItem(name: "min_id", value: "0")])
            }
            // Newest first on the wire; keep what the bounds allow.
            var kept = posts
            if let since { kept = kept.filter { $0.createdAt >= since } }
            if let maxPosts { kept = Array(kept.prefix(max(0, maxPosts - fetched))) }
            fetched += kept.count
            let reachedBound = kept.count < posts.count || (maxPosts.map { fetched >= $0 } ?? false)
            let changes = kept.reversed().map(FeedChange.upsert)
            let carried = Self.videos(of: kept, from: videos)
            if let next = response.next, !page.items.isEmpty, !reachedBound {
                return FeedPage(changes: changes, skipped: skipped,
                                nextCursor: MastodonCursor.backfill(fetched: fetched, forward: forward, next: next).feedCursor, hasMore: true,
                                videos: carried, nextRequest: next.absoluteString)
            }
            // A timeline is bounded (by maxPosts, since, or the server's own cut-off) and forgets
            // deleted statuses, so a status not seen is not known to be deleted.
            return FeedPage(changes: changes, skipped: skipped, nextCursor: MastodonCursor.forward(forward ?? url).feedCursor,
                            hasMore: false, missingMeansDeleted: false, videos: carried)
        case .forward(let forward)?:
            guard !page.items.isEmpty, let previous = response.previous else {
                return FeedPage(changes: [], skipped: skipped, nextCursor: MastodonCursor.forward(forward).feedCursor, hasMore: false)
            }
            // A short page means the top of the timeline has been reached.
            return FeedPage(changes: posts.reversed().map(FeedChange.upsert), skipped: skipped,
                            nextCursor: MastodonCursor.forward(previous).feedCursor, hasMore: page.items.count >= pageSize,
                            videos: Self.videos(of: posts, from: videos))
        }
    }

    /// Fetches the page after `response` (of `count` statuses) while it is mapped, when it is a
    /// walk back's and cannot be the walk's last for a bound: with a `since` date, or `maxPosts`
    /// within its statuses, it may be. A forward walk's page is most often its last, so none is
    /// fetched ahead there.
    private func readAhead(after response: MastodonClient.Response, holding count: Int, of state: MastodonCursor?) async {
        guard let next = response.next, since == nil else { return }
        let fetched: Int
        switch state {
        case nil: fetched = 0
        case .backfill(let count, _, _)?: fetched = count
        case .forward?: return
        }
        if let maxPosts, fetched + count >= maxPosts { return }
        let url = withLimit(next)
        await readAhead.start(url.absoluteString) { [client] in try await client.get(url, "reading the timeline from") }
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
        // On the URL's text, its other items as the server wrote them: through URLComponents'
        // query items (decoded, then encoded again) this was 1.4% of a Mastodon pull's CPU.
        let text = url.absoluteString
        let fragment = text.firstIndex(of: "#") ?? text.endIndex
        let query = text[..<fragment].firstIndex(of: "?")
        var items = query.map { text[text.index(after: $0)..<fragment].split(separator: "&") } ?? []
        items.removeAll { $0.prefix { $0 != "=" } == "limit" }
        items.append("limit=\(pageSize)")
        return URL(string: text[..<(query ?? fragment)] + "?" + items.joined(separator: "&") + text[fragment...]) ?? url
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
        guard let account = try? MastodonAccount(body: response.body) else {
            throw ServiceError(.invalidResponse, "looking up @\(acct)", "the answer is not an account")
        }
        known[acct] = account.id
        return account.id
    }
}
