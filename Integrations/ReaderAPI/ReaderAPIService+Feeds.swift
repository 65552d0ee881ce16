import Core
import Foundation

/// Every served feed as a feed again: `GET /feeds/NAME.atom` and `/feeds/NAME.json`,
/// `/feeds/group/GROUP.atom|json` for a group's feeds, and `/feeds/all.atom|json` for every
/// served feed together; the newest `n` posts (default 100,
/// at most 1000), RFC 5005 `next` links past them (`?c=`), `ETag` and `Last-Modified`
/// answered with 304. Reached with HTTP Basic (a `serve-user` name and password), a login's
/// token (`Authorization: GoogleLogin auth=…`), or a feed token in the URL (`?token=`).
extension ReaderAPIService {
    func feedDocument(_ request: ServedRequest, _ fields: FormFields) async throws -> ServedResponse {
        let file = String(request.path.dropFirst("/feeds/".count))
        let atom = file.hasSuffix(".atom")
        guard atom || file.hasSuffix(".json") else { return .text(404, "feeds are served as /feeds/NAME.atom or /feeds/NAME.json\n") }
        guard let name = String(file.dropLast(5)).removingPercentEncoding, !name.isEmpty else {
            return .text(400, "the feed name in the path is not valid percent-encoded text\n")
        }
        guard try await reader(of: request, feed: name, token: fields["token"]) != nil else {
            return .text(401, "sign in with HTTP Basic (a feedsync serve-user name and password), or add ?token= from feedsync serve-user token\n",
                         headers: [("WWW-Authenticate", "Basic realm=\"feedsync\", charset=\"UTF-8\"")])
        }
        if name.hasPrefix("search/") {
            return try await searchDocument(String(name.dropFirst("search/".count)), atom: atom, file: file, fields, request)
        }
        var stream: String
        var covered = [name]
        if name.hasPrefix("group/") {
            let group = String(name.dropFirst("group/".count))
            guard context.feeds.contains(where: { $0.group == group }) else {
                return .text(404, "no served feed is in the group \(StreamRequest.shown(group))\n")
            }
            stream = "user/-/label/" + group
            covered = context.feeds.filter { $0.group == group }.map(\.name)
        } else if name == "all" && !context.feeds.contains(where: { $0.name == "all" }) {
            stream = StreamRequest.reading
            covered = context.feeds.map(\.name)
        } else if context.feeds.contains(where: { $0.name == name }) {
            stream = "feed/" + name
        } else {
            return .text(404, "no served feed is named \(StreamRequest.shown(name))\n")
        }
        var limited = FormFields([("n", fields["n"] ?? "100")])
        if let continuation = fields["c"] { limited = FormFields([("n", fields["n"] ?? "100"), ("c", continuation)]) }
        let parsed: StreamRequest
        switch StreamRequest.parse(limited, stream: stream, feeds: context.feeds, defaultCount: 100) {
        case .success(let request): parsed = request
        case .failure(let error): return .text(400, error.line + "\n")
        }
        guard parsed.query.limit <= 1_000 else { return .text(400, "n is at most 1000 for a feed\n") }
        stream = name
        // The validator first, from the store's change counters: a reader that has this page is answered without reading it.
        let tag = await versionTag(name, feeds: covered, fields, parts: [fields["n"], fields["c"]])
        if let tag, Self.matches(request, tag) { return ServedResponse(status: 304, body: [], headers: [("ETag", tag)]) }
        let (posts, _, continuation) = try await page(parsed)
        // A reader that came with a feed token needs it in the links too, or the next page is 401.
        let token = fields["token"].map { "token=\($0)" }
        let base = "/feeds/\(file)"
        let selfURL = base + Self.query([fields["c"].map { "c=\($0)" }, token])
        let nextURL = continuation.map { base + Self.query(["c=\($0)", fields["n"].map { "n=\($0)" }, token]) }
        let title = stream == "all" ? "feedsync: every feed" : "feedsync: \(stream)"
        return document(posts, atom: atom, title: title, selfURL: selfURL, nextURL: nextURL, request, name: name, tag: tag)
    }

    /// A saved search as a feed: its best `n` matches (default 100, at most 1000), newest first; no paging.
    private func searchDocument(_ name: String, atom: Bool, file: String, _ fields: FormFields,
                                _ request: ServedRequest) async throws -> ServedResponse {
        guard let text = context.searches[name] else { return .text(404, "no saved search is named \(StreamRequest.shown(name))\n") }
        var count = 100
        if let given = fields["n"] {
            guard given.count <= 4, let parsed = Int(given), (1...1_000).contains(parsed) else {
                return .text(400, "n=\(StreamRequest.shown(given)) is not a count from 1 to 1000\n")
            }
            count = parsed
        }
        let tag = await versionTag("search/" + name, feeds: context.feeds.map(\.name), fields, parts: [text, "\(count)"])
        if let tag, Self.matches(request, tag) { return ServedResponse(status: 304, body: [], headers: [("ETag", tag)]) }
        let hits = try await context.store.search(SearchQuery(text: text, limit: count))
        let groups = self.groups
        let posts = hits.map(\.stored).filter { groups[$0.feed] != nil }.sorted { $0.listingPosition.isBefore($1.listingPosition) }
        return document(posts, atom: atom, title: "feedsync: search \(name)", selfURL: "/feeds/\(file)", nextURL: nil, request, name: name, tag: tag)
    }

    /// The document's `ETag` from the change counters of the feeds it covers (and what else
    /// shapes it: its name, its page and count, whether its links carry a token), without
    /// reading a post; `nil` when the store keeps no counters.
    private func versionTag(_ name: String, feeds: [String], _ fields: FormFields, parts: [String?]) async -> String? {
        guard let versions = try? await context.store.feedVersions() else { return nil }
        let text = ([name, fields["token"] == nil ? "" : "token"] + parts.map { $0 ?? "" }
                    + feeds.sorted().map { "\($0)=\(versions[$0] ?? 0)" }).joined(separator: "\n")
        return "\"v\(ItemID(feed: name, post: PostID(text)).short)\""
    }

    /// Whether the client's `If-None-Match` names `tag`.
    private static func matches(_ request: ServedRequest, _ tag: String) -> Bool {
        guard let match = request.header("if-none-match") else { return false }
        return match.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == tag }
    }

    /// The document, or 304 when the client's `If-None-Match` or `If-Modified-Since` shows it has it.
    private func document(_ posts: [StoredPost], atom: Bool, title: String, selfURL: String, nextURL: String?,
                          _ request: ServedRequest, name: String, tag: String?) -> ServedResponse {
        let tag = tag ?? "\"\(ItemID(feed: name, post: PostID(posts.map { "\($0.feed)/\($0.post.id)/\(($0.post.editedAt ?? $0.post.createdAt).timeIntervalSince1970)" }.joined(separator: ","))).short)\""
        let modified = AtomDocument.newest(posts)
        let headers = [("ETag", tag), ("Last-Modified", HTTPDate.string(modified))]
        if request.header("if-none-match") != nil {
            if Self.matches(request, tag) { return ServedResponse(status: 304, body: [], headers: headers) }
        } else if let since = request.header("if-modified-since").flatMap(HTTPDate.parse), modified <= since {
            return ServedResponse(status: 304, body: [], headers: headers)
        }
        return atom
            ? ServedResponse(status: 200, contentType: "application/atom+xml; charset=utf-8",
                             body: AtomDocument.render(title: title, selfURL: selfURL, nextURL: nextURL, posts: posts), headers: headers)
            : ServedResponse(status: 200, contentType: "application/feed+json; charset=utf-8",
                             body: JSONFeedDocument.render(title: title, selfURL: selfURL, nextURL: nextURL, posts: posts), headers: headers)
    }

    /// `?a&b` of the parts given, or nothing.
    static func query(_ parts: [String?]) -> String {
        let given = parts.compactMap { $0 }
        return given.isEmpty ? "" : "?" + given.joined(separator: "&")
    }

    /// The reader a feed request comes from: by its feed token (`?token=`, for `feed` only), by
    /// HTTP Basic (slowed when wrong, as a login is), or a login's token.
    private func reader(of request: ServedRequest, feed: String, token: String?) async throws -> String? {
        if let token { return try await authenticator.feedReader(token: token, feed: feed, from: request.peer) }
        guard let header = request.header("authorization"), header.hasPrefix("Basic ") else {
            return try await authenticator.account(of: request)?.name
        }
        guard header.utf8.count <= 4_096, let data = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
              let pair = String(data: data, encoding: .utf8), let colon = pair.firstIndex(of: ":") else { return nil }
        let fields = FormFields([("Email", String(pair[..<colon])), ("Passwd", String(pair[pair.index(after: colon)...]))])
        return try await authenticator.check(fields, from: request.peer)
    }
}

/// HTTP dates (RFC 9110's IMF-fixdate), for `Last-Modified` and `If-Modified-Since`.
enum HTTPDate {
    private static func formatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }

    static func string(_ date: Date) -> String { formatter().string(from: date) }

    static func parse(_ text: String) -> Date? { text.count <= 64 ? formatter().date(from: text) : nil }
}
