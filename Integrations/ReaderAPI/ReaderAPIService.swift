import Core
import Foundation

/// The Google Reader API, the subset reader apps call, over the store's roles: what
/// `/accounts/ClientLogin` and `/reader/api/0/…` answer.
///
/// Every answer to a bad request is one line: 400 for a malformed one, 401 for a missing or
/// wrong token (after the slow-down for a login), 404 for a path it does not serve.
struct ReaderAPIService: Sendable {
    let context: ServingContext
    let authenticator: ReaderAuthenticator
    let index = ItemIndex()

    init(_ context: ServingContext) {
        self.context = context
        authenticator = ReaderAuthenticator(store: context.store, log: context.log)
    }

    func answer(_ request: ServedRequest) async -> ServedResponse {
        do {
            return try await route(request)
        } catch let error as ServiceError {
            context.log.warn("reader_api_failed", ["path": String(request.path.prefix(200)), "error": error.description])
            return .text(503, "the store could not answer; try again\n")
        } catch {
            return .text(503, "the store could not answer; try again\n")
        }
    }

    private func route(_ request: ServedRequest) async throws -> ServedResponse {
        guard let query = FormFields(request.query) else { return .text(400, "the query is not valid percent-encoded text\n") }
        var fields = query
        if request.method == "POST" {
            guard let body = FormFields(String(decoding: request.body, as: UTF8.self)) else {
                return .text(400, "the body is not a valid form (application/x-www-form-urlencoded)\n")
            }
            fields = query.merged(with: body)
        }
        if request.path == "/accounts/ClientLogin" {
            return try await authenticator.login(fields, from: request.peer)
        }
        if request.path.hasPrefix("/feeds/") {
            guard request.method != "POST" else { return .text(405, "feeds are read with GET\n", headers: [("Allow", "GET, HEAD")]) }
            return try await feedDocument(request, query)
        }
        if request.path.hasPrefix("/reader/atom/") {
            guard request.method != "POST" else { return .text(405, "streams are read with GET\n", headers: [("Allow", "GET, HEAD")]) }
            return try await atomStream(request, query)
        }
        let api = "/reader/api/0/"
        guard request.path.hasPrefix(api) else { return .text(404, "no such path; the API is under /reader/api/0/\n") }
        guard let (name, token) = try await authenticator.account(of: request) else {
            return .text(401, "sign in first: POST /accounts/ClientLogin, then send Authorization: GoogleLogin auth=TOKEN\n",
                         headers: [("WWW-Authenticate", "GoogleLogin realm=\"feedsync\"")])
        }
        let call = String(request.path.dropFirst(api.count))
        if request.method == "POST", ["edit-tag", "mark-all-as-read"].contains(call),
           fields["T"] != ReaderAuthenticator.editToken(for: token) {
            return .text(401, "the T field is not this session's token: GET /reader/api/0/token\n")
        }
        if call.hasPrefix("stream/contents/") {
            let stream = String(call.dropFirst("stream/contents/".count)).removingPercentEncoding
            guard let stream, !stream.isEmpty else { return .text(400, "the stream in the path is not valid percent-encoded text\n") }
            return try await streamContents(fields, stream: stream)
        }
        switch call {
        case "stream/contents": return try await streamContents(fields, stream: nil)
        case "stream/items/ids": return try await itemIDs(fields)
        case "stream/items/contents": return try await itemContents(fields)
        case "unread-count": return try await unreadCount()
        case "edit-tag", "mark-all-as-read":
            guard request.method == "POST" else { return .text(400, "\(call) is a POST\n") }
            return call == "edit-tag" ? try await editTag(fields) : try await markAllAsRead(fields)
        case "token":
            return .text(200, ReaderAuthenticator.editToken(for: token))
        case "user-info":
            return json { json in
                json.openObject()
                json.string("userId", name)
                json.string("userName", name)
                json.string("userProfileId", name)
                json.string("userEmail", name)
                json.closeObject()
            }
        case "subscription/list":
            return json { json in
                json.openObject()
                json.key("subscriptions")
                json.openArray()
                for feed in context.feeds { GReaderJSON.subscription(feed, to: &json) }
                json.closeArray()
                json.closeObject()
            }
        case "tag/list":
            return json { json in
                json.openObject()
                json.key("tags")
                json.openArray()
                GReaderJSON.tag("user/-/state/com.google/starred", type: nil, to: &json)
                for group in Set(context.feeds.compactMap(\.group)).sorted() {
                    GReaderJSON.tag("user/-/label/\(group)", type: "folder", to: &json)
                }
                json.closeArray()
                json.closeObject()
            }
        default:
            return .text(404, "this server does not answer \(Self.shown(request.path)); see docs/reader-apps.md for what it does\n")
        }
    }

    /// `/reader/atom/STREAM`: the older Google Reader's Atom of a stream, which FeedHQ kept and
    /// newsboat's `feedhq` source reads: the served feed of that stream (`feed/NAME`, a label,
    /// the reading list) as ``feedDocument(_:_:)`` serves it, with `n` and `c`.
    private func atomStream(_ request: ServedRequest, _ query: FormFields) async throws -> ServedResponse {
        guard let stream = String(request.path.dropFirst("/reader/atom/".count)).removingPercentEncoding else {
            return .text(400, "the stream in the path is not valid percent-encoded text\n")
        }
        let name: String
        if stream == StreamRequest.reading {
            name = "all"
        } else if stream.hasPrefix("feed/") {
            name = String(stream.dropFirst(5))
        } else if stream.hasPrefix("user/-/label/") {
            name = "group/" + stream.dropFirst("user/-/label/".count)
        } else {
            return .text(404, "no served stream is \(Self.shown(stream)): feed/NAME, user/-/label/GROUP or the reading list\n")
        }
        guard !name.contains("?"), !name.contains("#"), let path = ("/feeds/" + name + ".atom").addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)
        else { return .text(404, "no served stream is \(Self.shown(stream))\n") }
        var feed = request
        feed.path = path
        return try await feedDocument(feed, query)
    }

    func json(_ write: (inout JSONWriter) -> Void) -> ServedResponse {
        var json = JSONWriter(escaping: [.controlsAsUnicode, .replacingNUL])
        write(&json)
        return ServedResponse(status: 200, contentType: "application/json; charset=utf-8", body: json.bytes)
    }

    /// A path as an answer may quote it: bounded, control characters escaped.
    static func shown(_ path: String) -> String { Terminal.safe(path, limit: 120) }
}
