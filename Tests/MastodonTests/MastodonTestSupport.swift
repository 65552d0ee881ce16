import Core
import Foundation
import IntegrationKit
@testable import Mastodon
import Synchronization

// Helpers for the Mastodon tests: fixtures, one-status and one-page decoding, a scripted transport.

let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Fixtures/mastodon")

/// A real page of the fake server's home timeline (`--seed 1`, `limit=40`): reblogs, replies,
/// content warnings, an edit, images, videos and gifvs, escaped the way Rails escapes JSON.
let recordedPage = try! Data(contentsOf: fixtures.appendingPathComponent("pages/home.json"))

func readStatus(_ data: Data) throws -> MastodonStatus {
    try data.withUnsafeBytes { raw in
        var reader = JSONReader(raw.bindMemory(to: UInt8.self))
        return try MastodonStatus(reading: &reader)
    }
}

func readMedia(_ data: Data) throws -> MastodonMediaAttachment {
    try data.withUnsafeBytes { raw in
        var reader = JSONReader(raw.bindMemory(to: UInt8.self))
        return try MastodonMediaAttachment(reading: &reader, path: "media_attachments")
    }
}

/// What the decoder and the mapping make of a page body.
func mapPage(_ body: Data) throws -> (posts: [Post], skipped: [SkippedItem], videos: [VideoID: Video]) {
    try MastodonTimelineResponse(body: body).mapped()
}

func page(_ statuses: [String]) -> Data { Data("[\(statuses.joined(separator: ","))]".utf8) }

/// A status as the documentation shows one, with `fields` (a JSON object's members) in place
/// of the fields they name: the two decoders read duplicate keys differently, so there are none.
func status(_ id: String = "110000000000000001", _ fields: String = "") -> String {
    let defaults = [("id", "\"\(id)\""), ("created_at", "\"2026-11-20T10:15:30.000Z\""), ("visibility", "\"public\""),
                    ("content", "\"<p>hi</p>\""), ("media_attachments", "[]"),
                    ("account", #"{"id": "1", "username": "ada", "acct": "ada", "display_name": "Ada", "avatar": "https://files.example/a.png"}"#)]
    var named: Set<String> = []
    Data("{\(fields)}".utf8).withUnsafeBytes { raw in
        var reader = JSONReader(raw.bindMemory(to: UInt8.self))
        // Fields that are not JSON on purpose are spliced in as they are.
        try? reader.readObject { reader, key in
            named.insert(key)
            try reader.skipValue()
        }
    }
    let members = defaults.filter { !named.contains($0.0) }.map { "\"\($0.0)\": \($0.1)" } + (fields.isEmpty ? [] : [fields])
    return "{" + members.joined(separator: ", ") + "}"
}

/// Answers every request with the next scripted response, recording the requests.
final class StubTransport: HTTPTransport {
    private let script: Mutex<[HTTPResponse]>
    private let sent = Mutex<[URL]>([])

    init(_ responses: [HTTPResponse]) { script = Mutex(responses) }

    /// The addresses asked for so far, in order.
    var requests: [URL] { sent.withLock { $0 } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        sent.withLock { $0.append(request.url) }
        guard let next = script.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
            throw ServiceError(.unavailable, "sending", "the connection was refused")
        }
        return next
    }

    func close() async {}
}

func makePostService(_ responses: [HTTPResponse], maxPosts: Int? = nil, since: Date? = nil) -> MastodonPostService {
    makePostService(StubTransport(responses), maxPosts: maxPosts, since: since)
}

func makePostService(_ transport: StubTransport, maxPosts: Int? = nil, since: Date? = nil) -> MastodonPostService {
    let client = MastodonClient(server: URL(string: "http://127.0.0.1:1")!, token: Secret("tok"), transport: transport,
                                requests: RequestCounter(), gate: HostGate(), pacer: RateLimitPacer())
    // Fresh for an hour: on a machine busy with every other test, a task may wait its turn for long.
    return MastodonPostService(client: client, timeline: .home, pageSize: 40, maxPosts: maxPosts, since: since,
                               accounts: AccountLookup(client: client), readAhead: ReadAhead(freshFor: .seconds(3_600)))
}
