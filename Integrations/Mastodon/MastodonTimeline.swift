import Foundation

/// Which timeline a feed mirrors, from config: `home`, `list:<id>`, `account:<id or @acct>`,
/// `bookmarks`, `favourites`, `hashtag:<tag>`, `public`, `public:local`.
enum MastodonTimeline: Equatable, Sendable {
    case home
    case list(String)
    case account(String)
    case accountNamed(String)
    case bookmarks
    case favourites
    case hashtag(String)
    /// The federated timeline, or with `local` only this server's statuses.
    case publicTimeline(local: Bool)

    init?(_ text: String) {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        let argument = parts.count == 2 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
        switch (parts.first ?? "", argument) {
        case ("home", ""): self = .home
        case ("bookmarks", ""): self = .bookmarks
        case ("favourites", ""), ("favorites", ""): self = .favourites
        case ("public", ""): self = .publicTimeline(local: false)
        case ("public", "local"): self = .publicTimeline(local: true)
        case ("list", let id) where !id.isEmpty: self = .list(id)
        case ("hashtag", let tag) where !tag.isEmpty: self = .hashtag(tag.hasPrefix("#") ? String(tag.dropFirst()) : tag)
        case ("account", let name) where name.hasPrefix("@") && name.count > 1: self = .accountNamed(String(name.dropFirst()))
        case ("account", let id) where !id.isEmpty && !id.hasPrefix("@"): self = .account(id)
        default: return nil
        }
    }

    /// The API path, once an `@acct` has been looked up to its id.
    func path(accountID: String?) -> String {
        switch self {
        case .home: return "/api/v1/timelines/home"
        case .list(let id): return "/api/v1/timelines/list/\(Self.escape(id))"
        case .account(let id): return "/api/v1/accounts/\(Self.escape(id))/statuses"
        case .accountNamed: return "/api/v1/accounts/\(Self.escape(accountID ?? ""))/statuses"
        case .bookmarks: return "/api/v1/bookmarks"
        case .favourites: return "/api/v1/favourites"
        case .hashtag(let tag): return "/api/v1/timelines/tag/\(Self.escape(tag))"
        case .publicTimeline: return "/api/v1/timelines/public"
        }
    }

    /// Query items the timeline's first request carries besides `limit` (the server's links keep them).
    var query: [URLQueryItem] {
        guard case .publicTimeline(local: true) = self else { return [] }
        return [URLQueryItem(name: "local", value: "true")]
    }

    private static func escape(_ segment: String) -> String {
        segment.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? segment
    }
}
