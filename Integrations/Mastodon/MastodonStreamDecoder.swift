import Core
import Foundation
import IntegrationKit

/// Turns the events of a Mastodon stream into ``Core/LiveEvent``s.
///
/// `update` (a new status) and `status.update` (an edit) carry a status as JSON, read and mapped
/// exactly as a polled page's (``MastodonTimelineResponse/mapped()``): a status that cannot be
/// read or mapped is skipped with its reason (``Core/LiveEvent/skipped(_:)``), as on a polled
/// page. `delete` carries the status id as plain text. Anything else is ignored. An event that
/// does not hold what its type promises (data that is not one JSON object, a delete without a
/// status id) fails the stream (`.invalidResponse`): the consumer reconnects, and the catch-up
/// sync reads the timeline as a poll would.
struct MastodonStreamDecoder {
    let server: String
    /// Avatar links already checked on this stream.
    private var avatars: [String: WebLink?] = [:]

    init(server: String) { self.server = server }

    mutating func decode(_ event: ServerSentEvent) throws -> LiveEvent? {
        switch event.type {
        case "update", "status.update":
            return try status(event)
        case "delete":
            let id = event.data.trimmingCharacters(in: .whitespaces)
            guard !id.isEmpty, id.count <= 64, id.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }) else {
                throw invalid("a delete event carries \"\(Terminal.safe(id, limit: 80))\", not a status id")
            }
            return .deleted(PostID(id))
        default:
            return nil
        }
    }

    private mutating func status(_ event: ServerSentEvent) throws -> LiveEvent {
        // A JSON object, or the event is not what it claims (on a polled page, an item that is
        // no object is skipped; here it is a stream gone wrong).
        guard event.data.utf8.first(where: { !Self.jsonSpace.contains($0) }) == UInt8(ascii: "{") else {
            throw invalid("an \(event.type) event's data is not a status")
        }
        let page: MastodonTimelineResponse
        do {
            page = try MastodonTimelineResponse(body: Data("[".utf8) + Data(event.data.utf8) + Data("]".utf8))
        } catch {
            throw invalid("an \(event.type) event's data is not a status")
        }
        guard page.items.count == 1 else { throw invalid("an \(event.type) event's data is not one status") }
        let (posts, skipped, videos) = page.mapped(avatars: &avatars)
        if let post = posts.first { return .upserted(post, videos: post.videoIDs.compactMap { videos[$0] }) }
        guard let item = skipped.first else { throw invalid("an \(event.type) event's data is not one status") }
        return .skipped(item)
    }

    /// JSON's white space (RFC 8259 §2).
    private static let jsonSpace: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]

    private func invalid(_ reason: String) -> ServiceError {
        ServiceError(.invalidResponse, "reading the stream of \(server)", reason)
    }
}
