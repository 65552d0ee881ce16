import Core
import Foundation

/// Whose records a live feed follows on Jetstream: `home` → the account's follows (and the
/// account itself, whose posts its home timeline shows), `author:X` → X, `list:URI` → the
/// list's members. Feeds, likes and search have no stream.
enum BlueskySubscription: Hashable, Sendable {
    case follows
    case author(String)
    case list(String)

    /// The most DIDs one Jetstream connection may filter on (its README).
    static let maxDIDsPerConnection = 10_000
    /// The most accounts followed through one subscription; past it the rest are polled only.
    static let maxDIDs = 100_000
    /// The collections a live feed asks for.
    static let collections = ["app.bsky.feed.post", "app.bsky.feed.repost"]

    init?(_ timeline: BlueskyTimeline) {
        switch timeline {
        case .home: self = .follows
        case .author(let actor): self = .author(actor)
        case .list(let uri): self = .list(uri)
        case .feed, .likes, .search: return nil
        }
    }

    /// The subscription in words, for logs.
    var shown: String {
        switch self {
        case .follows: "home"
        case .author(let actor): "author \(actor)"
        case .list(let uri): "list \(Terminal.safe(uri, limit: 120))"
        }
    }

    /// The DIDs to follow now, with the profiles the PDS gave for them (to hydrate reposts by them).
    ///
    /// Every page of `getFollows` or `getList` is read: the set decides what is live.
    func members(_ client: BlueskyClient, _ session: BlueskyLiveSession, identifier: String) async throws -> [String: BlueskyProfile] {
        switch self {
        case .follows:
            let own = try await session.did() ?? identifier
            var members = try await pages(client, session, "app.bsky.graph.getFollows", [URLQueryItem(name: "actor", value: own)], list: "follows")
            if BlueskyIdentifier.isDID(own), members[own] == nil { members[own] = BlueskyProfile(did: own, handle: identifier) }
            return members
        case .author(let actor):
            let response = try await session.query(client, "app.bsky.actor.getProfile", [URLQueryItem(name: "actor", value: actor)],
                                                   "reading the profile of \(actor) on")
            guard let profile = (try? BlueskyGraphPage.profile(body: response.body)) ?? nil else {
                throw ServiceError(.invalidResponse, "reading the profile of \(actor) on \(client.origin.host)", "the answer is not a profile")
            }
            return [profile.did: profile]
        case .list(let uri):
            return try await pages(client, session, "app.bsky.graph.getList", [URLQueryItem(name: "list", value: uri)], list: "items")
        }
    }

    private func pages(_ client: BlueskyClient, _ session: BlueskyLiveSession, _ method: String, _ parameters: [URLQueryItem],
                       list key: String) async throws -> [String: BlueskyProfile] {
        var members: [String: BlueskyProfile] = [:]
        var cursor: String?
        var seen: Set<String> = []
        repeat {
            let query = parameters + [URLQueryItem(name: "limit", value: "100")] + (cursor.map { [URLQueryItem(name: "cursor", value: $0)] } ?? [])
            let operation = "reading whom the \(shown) subscription follows from"
            let response = try await session.query(client, method, query, operation)
            let page: BlueskyGraphPage
            do { page = try BlueskyGraphPage(body: response.body, list: key) } catch {
                throw ServiceError(.invalidResponse, "\(operation) \(client.origin.host)", "the answer has no readable \(key) list")
            }
            for profile in page.profiles { members[profile.did] = profile }
            cursor = page.cursor
            // A server that repeats a cursor, or lists without end, is stopped.
            guard cursor.map({ seen.insert($0).inserted }) ?? true, members.count <= Self.maxDIDs else { break }
        } while cursor != nil
        return members
    }
}
