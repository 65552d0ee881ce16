import Core
import Foundation
import IntegrationKit

/// Turns the events of a Mastodon stream into ``Core/LiveEvent``s.
///
/// `update` and `status.update` carry a status as JSON, read and mapped exactly as a polled
/// page's; `delete` carries the status id as plain text. Anything else is ignored. An event that
/// does not hold what its type promises fails the stream (`.invalidResponse`): the consumer
/// reconnects, and the catch-up sync reads the timeline as a poll would.
struct MastodonStreamDecoder {
    let server: String
    private var avatars: [String: URL?] = [:]

    init(server: String) { self.server = server }

    mutating func decode(_ event: ServerSentEvent) throws -> LiveEvent? {
        switch event.type {
        case "update":
            let (post, videos) = try status(event)
            return .upserted(post, videos: videos)
        case "status.update":
            let (post, videos) = try status(event)
            return .edited(post, videos: videos)
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

    private mutating func status(_ event: ServerSentEvent) throws -> (Post, [Video]) {
        let page: MastodonTimelineResponse
        do {
            page = try MastodonTimelineResponse(body: Data("[".utf8) + Data(event.data.utf8) + Data("]".utf8))
        } catch {
            throw invalid("an \(event.type) event's data is not a status")
        }
        guard page.items.count == 1, case .status(let status) = page.items[0] else {
            if page.items.count == 1, case .unreadable(_, let reason) = page.items[0] { throw invalid("an \(event.type) event's status cannot be read: \(reason)") }
            throw invalid("an \(event.type) event's data is not one status")
        }
        var videos: [Video] = []
        do {
            return (try Post(status, avatars: &avatars, videos: &videos), videos)
        } catch let error as ServiceError {
            throw invalid("an \(event.type) event's status cannot be mapped: \(error.reason)")
        }
    }

    private func invalid(_ reason: String) -> ServiceError {
        ServiceError(.invalidResponse, "reading the stream of \(server)", reason)
    }
}
