import Core
import Foundation

/// `feedsync add URL`: the feed at a site's or a feed's address (`https://…`, or
/// `example.org/feed` meaning https), found on the page when the address is a page.
struct WebFeedAddressForm: AddForm {
    let summary = "a site or feed URL"
    let label = "a web feed"
    let noun = "a web feed"
    /// An OPML file's bounds are refused as not applying to one address.
    let nounsRefusing = ["--deadline": "one address", "--per-host": "one address"]
    let options: [AddOption] = []
    let precedence = AddPrecedence.address

    func recognises(_ text: String, _ context: any AddContext) throws -> Bool { Self.url(text) != nil }

    func add(_ text: String, _ context: any AddContext) async throws -> AddedFeeds {
        guard let url = Self.url(text) else { throw context.usageError("\"\(Terminal.safe(text, limit: 200))\" is not a web address") }
        let (found, others) = try await WebFeedProbe.firstFeed(at: url, userAgent: context.userAgent)
        var taken = try context.takenNames()
        let name = context.option("--name") ?? FeedNaming.unique(FeedNaming.slug(found.title) ?? FeedNaming.slug(found.url.host) ?? "feed", in: &taken)
        let title = found.title.map { "\"\(Terminal.safe($0, limit: 80))\", " } ?? ""
        var notes: [String] = []
        if !others.isEmpty {
            notes.append("the page names \(others.count) more feed\(others.count == 1 ? "" : "s"): "
                         + others.map { Terminal.safe($0.absoluteString, limit: 200) }.joined(separator: ", "))
        }
        return AddedFeeds(feeds: [NewFeed(name: name, posts: WebFeedIntegration.posts(found.url))],
                          saying: "added feed \(name) (web feed \(title)\(Terminal.safe(found.url.absoluteString, limit: 200))) to \(context.configName)",
                          notes: notes)
    }

    /// `text` as an http(s) URL with a host and no credentials (`https://` when it names no scheme).
    static func url(_ text: String) -> URL? {
        let withScheme = text.contains("://") ? text : "https://\(text)"
        guard let url = URL(string: withScheme), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty, url.user == nil, url.password == nil else { return nil }
        return url
    }
}
