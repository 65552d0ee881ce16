import Core
import Foundation
import IntegrationKit

/// Replays responses recorded by `server.py --dump`, so the HTTP API client runs offline.
///
/// The folder holds `index.json` — `{"responses": [{"request": "GET /v1/feed?limit=50",
/// "status": 200, "headers": {…}, "body": "feed-001.json"}]}` — and the body files. A request
/// matches on method and target (path and query; the client sorts the query by name); request bodies are not checked, so
/// any credentials log in. A request carrying `If-None-Match` equal to the recorded `ETag`
/// gets `304`, as from the live server. An unrecorded request gets `404`.
struct FixtureTransport: HTTPTransport {
    private struct Index: Decodable {
        struct Entry: Decodable {
            var request: String
            var status: Int
            var headers: [String: String]?
            var body: String?
        }
        var responses: [Entry]
    }

    private let responses: [String: HTTPResponse]

    /// Reads the index and every body it names.
    /// - Throws: a phrase saying what is wrong with the folder.
    init(directory: URL) throws(FixtureError) {
        let indexURL = directory.appendingPathComponent("index.json")
        guard let data = FileManager.default.contents(atPath: indexURL.path) else {
            throw FixtureError(reason: "\(indexURL.path) cannot be read")
        }
        guard let index = try? JSONDecoder().decode(Index.self, from: data) else {
            throw FixtureError(reason: "\(indexURL.path) is not a fixture index ({\"responses\": [...]})")
        }
        var responses: [String: HTTPResponse] = [:]
        for entry in index.responses {
            var body = Data()
            if let file = entry.body {
                guard let contents = FileManager.default.contents(atPath: directory.appendingPathComponent(file).path) else {
                    throw FixtureError(reason: "\(file), named in \(indexURL.path), cannot be read")
                }
                body = contents
            }
            responses[entry.request] = HTTPResponse(status: entry.status, headers: entry.headers ?? [:], body: body)
        }
        self.responses = responses
    }

    struct FixtureError: Error { var reason: String }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let recorded = responses["\(request.method) \(request.target)"] else {
            let body = #"{"error": {"code": "not_found", "message": "no recorded response for this request"}}"#
            return HTTPResponse(status: 404, headers: ["Content-Type": "application/json"], body: Data(body.utf8))
        }
        if let tag = recorded.header("ETag"), request.headers.first(where: { $0.key.lowercased() == "if-none-match" })?.value == tag {
            return HTTPResponse(status: 304, headers: ["ETag": tag])
        }
        return recorded
    }

    func close() async {}
}
