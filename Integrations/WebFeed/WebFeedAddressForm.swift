import Core
import Foundation
import IntegrationKit

/// `feedsync add URL`: the feed at a site's or a feed's address (`https://…`, or
/// `example.org/feed` meaning https), found on the page when the address is a page; a private
/// one with its credentials (``WebFeedAddAuth``), sent only to the address's origin.
struct WebFeedAddressForm: AddForm {
    let summary = "a site or feed URL"
    let label = "a web feed"
    let noun = "a web feed"
    /// An OPML file's bounds are refused as not applying to one address.
    let nounsRefusing = ["--deadline": "one address", "--per-host": "one address"]
    let options = WebFeedAddAuth.options
    let precedence = AddPrecedence.address

    func recognises(_ text: String, _ context: any AddContext) throws -> Bool { Self.url(text) != nil }

    func add(_ text: String, _ context: any AddContext) async throws -> AddedFeeds {
        guard let url = Self.url(text) else { throw context.usageError("\"\(Terminal.safe(text, limit: 200))\" is not a web address") }
        let auth = try WebFeedAddAuth.read(context, for: url)
        let (found, others) = try await WebFeedProbe.firstFeed(at: url, userAgent: context.userAgent, auth: auth?.credentials)
        // The credentials stay with the origin they were given for: a feed the page names
        // elsewhere would get them at every pull.
        if auth != nil, Origin(found.url) != Origin(url) {
            throw ServiceError(.refused, "adding \(Terminal.safe(url.absoluteString, limit: 200))",
                               "the feed it leads to, \(Terminal.safe(found.url.absoluteString, limit: 200)), is on another origin, "
                               + "where these credentials are not sent; add that address with the credentials it takes")
        }
        var posts = WebFeedIntegration.posts(found.url)
        if let auth { posts.append(("auth", auth.object)) }
        var taken = try context.takenNames()
        let name = context.option("--name") ?? FeedNaming.unique(FeedNaming.slug(found.title) ?? FeedNaming.slug(found.url.host) ?? "feed", in: &taken)
        let title = found.title.map { "\"\(Terminal.safe($0, limit: 80))\", " } ?? ""
        var notes: [String] = []
        if !others.isEmpty {
            notes.append("the page names \(others.count) more feed\(others.count == 1 ? "" : "s"): "
                         + others.map { Terminal.safe($0.absoluteString, limit: 200) }.joined(separator: ", "))
        }
        return AddedFeeds(feeds: [NewFeed(name: name, posts: posts)],
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
