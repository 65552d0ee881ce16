import Foundation

/// Which stream of the streaming API carries a timeline's statuses, and where it is.
///
/// `home` → `user`, `list:ID` → `list?list=ID`, `hashtag:X` → `hashtag?tag=X`, `public` and
/// `public:local` → `public` and `public/local`. Account
/// timelines, bookmarks and favourites have no stream: they are only polled.
struct MastodonStream: Hashable, Sendable {
    /// The stream's name as the API spells it: `user`, `list`, `hashtag`, `public`, `public:local`.
    var name: String
    var query: [URLQueryItem]

    init?(_ timeline: MastodonTimeline) {
        switch timeline {
        case .home: (name, query) = ("user", [])
        case .list(let id): (name, query) = ("list", [URLQueryItem(name: "list", value: id)])
        case .hashtag(let tag): (name, query) = ("hashtag", [URLQueryItem(name: "tag", value: tag)])
        case .publicTimeline(let local): (name, query) = (local ? "public:local" : "public", [])
        case .account, .accountNamed, .bookmarks, .favourites: return nil
        }
    }

    /// `/api/v1/streaming/user`, `/api/v1/streaming/hashtag`; `public:local` is `public/local`.
    var path: String { "/api/v1/streaming/" + name.replacingOccurrences(of: ":", with: "/") }

    /// The stream in words, for logs: `user`, `hashtag swift`.
    var shown: String { ([name] + query.compactMap(\.value)).joined(separator: " ") }

    /// The `http(s)` form of a streaming URL a server announces (`wss://` → `https://`,
    /// `ws://` → `http://`); `nil` for anything that is not one of the four with a host.
    static func httpForm(_ text: String) -> URL? {
        guard var components = URLComponents(string: text.trimmingCharacters(in: .whitespaces)),
              let scheme = components.scheme?.lowercased(), let host = components.host, !host.isEmpty,
              components.user == nil, components.password == nil else { return nil }
        switch scheme {
        case "wss", "https": components.scheme = "https"
        case "ws", "http": components.scheme = "http"
        default: return nil
        }
        return components.url
    }
}
