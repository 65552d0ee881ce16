import Foundation

/// Which timeline a feed mirrors, from config: `home`, `author:@handle` or `author:did:…`,
/// `feed:at://…`, `list:at://…`, `likes` or `search:QUERY`.
enum BlueskyTimeline: Equatable, Sendable {
    case home
    case author(String)
    case feed(String)
    case list(String)
    case likes
    case search(String)

    /// The `filter` values `getAuthorFeed` documents.
    static let authorFilters = ["posts_with_replies", "posts_no_replies", "posts_with_media", "posts_and_author_threads"]

    init?(_ text: String) {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        let argument = parts.count == 2 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
        switch (parts.first ?? "", argument) {
        case ("home", ""): self = .home
        case ("likes", ""): self = .likes
        case ("author", let actor) where actor.hasPrefix("@") && BlueskyIdentifier.isHandle(String(actor.dropFirst())):
            self = .author(String(actor.dropFirst()).lowercased())
        case ("author", let actor) where BlueskyIdentifier.isDID(actor): self = .author(actor)
        case ("feed", let uri) where BlueskyIdentifier.atURI(uri, collection: "app.bsky.feed.generator") != nil: self = .feed(uri)
        case ("list", let uri) where BlueskyIdentifier.atURI(uri, collection: "app.bsky.graph.list") != nil: self = .list(uri)
        case ("search", let query) where !query.isEmpty && query.utf8.count <= 512: self = .search(query)
        default: return nil
        }
    }

    /// The XRPC method that serves it.
    var method: String {
        switch self {
        case .home: return "app.bsky.feed.getTimeline"
        case .author: return "app.bsky.feed.getAuthorFeed"
        case .feed: return "app.bsky.feed.getFeed"
        case .list: return "app.bsky.feed.getListFeed"
        case .likes: return "app.bsky.feed.getActorLikes"
        case .search: return "app.bsky.feed.searchPosts"
        }
    }

    /// The query parameters that pick the timeline, before `limit` and `cursor`.
    ///
    /// - Parameters:
    ///   - filter: the `getAuthorFeed` filter, for an author's timeline.
    ///   - viewer: whose likes `likes` lists: the logged-in account.
    func parameters(filter: String?, viewer: String?) -> [URLQueryItem] {
        switch self {
        case .home: return []
        case .author(let actor): return [URLQueryItem(name: "actor", value: actor)] + (filter.map { [URLQueryItem(name: "filter", value: $0)] } ?? [])
        case .feed(let uri): return [URLQueryItem(name: "feed", value: uri)]
        case .list(let uri): return [URLQueryItem(name: "list", value: uri)]
        case .likes: return [URLQueryItem(name: "actor", value: viewer ?? "")]
        case .search(let query): return [URLQueryItem(name: "q", value: query), URLQueryItem(name: "sort", value: "latest")]
        }
    }

    /// Whether the answer lists bare posts (`posts`) rather than feed items (`feed`).
    var listsBarePosts: Bool {
        if case .search = self { return true }
        return false
    }
}
