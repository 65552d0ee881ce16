import Core
import Foundation
import IntegrationKit

/// Follows a timeline through Mastodon's streaming API (server-sent events).
///
/// Each connection first asks where the server streams (`/api/v2/instance`
/// `configuration.urls.streaming`, else `/api/v1/instance` `urls.streaming_api`, else the
/// server itself), then holds `GET /api/v1/streaming/<stream>` open: `update` is a new status,
/// `delete` a deleted one, `status.update` an edit, through the same mapping as a polled page.
/// Other events are ignored; comments (`:thump`) only keep the connection alive.
///
/// The token goes only to the server's origin (scheme, host and port) or a subdomain of its
/// host on the same scheme and port (``IntegrationKit/Origin/admits(_:subdomains:)``), unless
/// the operator named the streaming URL: a server that announces another host or another port
/// is refused (`.refused`, one log line), and the feed keeps polling.
struct MastodonLiveSource: LiveSource {
    let client: MastodonClient
    let stream: MastodonStream
    /// The operator's `streamingURL`, trusted with the token wherever it points.
    let streamingURL: URL?
    let token: Secret
    let transport: any EventStreamTransport
    let limits: EventStreamLimits

    var connectionKey: String {
        "mastodon \(client.server.absoluteString) \(stream.path)?\(stream.query) \(streamingURL?.absoluteString ?? "") \(ConnectionDigest.of(token.revealed))"
    }

    var description: String { "mastodon stream \(stream.shown) at \(client.origin.host)" }

    func events() -> AsyncThrowingStream<LiveEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    let request = try await streamRequest()
                    var batch = MastodonStreamDecoder(server: client.origin.host)
                    for try await message in transport.eventStream(request, limits: limits) {
                        switch message {
                        case .opened: continuation.yield(.connected)
                        case .event(let event):
                            if let change = try batch.decode(event) { continuation.yield(change) }
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The stream request, at the URL the server announces (or the operator names).
    func streamRequest() async throws -> HTTPRequest {
        let base = try await streamingBase()
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false)!
        components.path = (components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path) + stream.path
        components.queryItems = stream.query.isEmpty ? nil : stream.query
        return HTTPRequest(url: components.url!, headers: ["Authorization": "Bearer \(token.revealed)", "Accept": "text/event-stream"],
                           followsRedirects: false)
    }

    /// Where the stream is: the operator's URL, else the announced one when the token may go
    /// there, else the server itself.
    func streamingBase() async throws -> URL {
        if let streamingURL { return streamingURL }
        guard let announced = try await announcedStreamingURL() else { return client.server }
        guard client.origin.admits(announced, subdomains: true) else {
            throw ServiceError(.refused, "opening the \(stream.shown) stream of \(client.origin.host)",
                               "the server announces its stream at \(Terminal.safe(announced.absoluteString, limit: 200)), which is not "
                               + "\(client.origin) or a subdomain of it on the same scheme and port, and the token goes nowhere else; "
                               + "name that URL as \"streamingURL\" in the feed's config to trust it. The feed keeps polling")
        }
        return announced
    }

    /// The streaming URL from `/api/v2/instance`, else `/api/v1/instance`; `nil` when neither says.
    private func announcedStreamingURL() async throws -> URL? {
        for (path, keys) in [("/api/v2/instance", ["configuration", "urls", "streaming"]), ("/api/v1/instance", ["urls", "streaming_api"])] {
            let response: MastodonClient.Response
            do {
                response = try await client.get(client.url(path), "asking where the stream is on")
            } catch let error as ServiceError where error.code == .invalidRequest {
                continue   // an older server without v2, or one without either
            }
            if let text = JSONReader.string(at: keys, in: response.body), !text.isEmpty {
                guard let url = MastodonStream.httpForm(text) else {
                    throw ServiceError(.invalidResponse, "asking where the stream is on \(client.origin.host)",
                                       "\(path) announces \"\(Terminal.safe(text, limit: 200))\", which is not a ws(s) or http(s) URL")
                }
                return url
            }
        }
        return nil
    }
}
