import Core
import Foundation
import IntegrationKit

/// Resolves videos a post links on any PeerTube instance: its id is the watch URL
/// (``IntegrationKit/PeerTubeWatchLink``), looked up with `GET /api/v1/videos/{id}` on that
/// instance, one request at a time per host at the process's gate.
///
/// An instance's answer is as hostile as any: bounded by `HTTPLimits`, decoded strictly, a
/// video that makes no sense is left unresolved with a notice. A 404 (or a link that is not a
/// watch URL) leaves the id unresolved; a 429 or 5xx fails the batch (``ServiceError``
/// `.rateLimited` / `.unavailable`), so the sync tries again later.
struct PeerTubeVideoService: VideoService {
    let transport: any HTTPTransport
    let hosts: HostGate
    let requests: RequestCounter
    let log: Logger
    let userAgent: String

    func videos(withIDs ids: [VideoID]) async throws -> [Video] {
        var found: [Video] = []
        for id in ids {
            guard let url = URL(string: id.rawValue), let link = PeerTubeWatchLink.parse(url) else { continue }
            let api = link.instance.appendingPathComponent("api/v1/videos").appendingPathComponent(link.id)
            let operation = "GET \(Origin(api)?.description ?? link.instance.absoluteString)/api/v1/videos/\(link.id)"
            let response = try await hosts.withPermit(for: Origin(api)?.gateKey ?? "") { [transport, requests, userAgent] in
                requests.add(1)
                return try await transport.send(HTTPRequest(url: api, headers: ["Accept": "application/json", "User-Agent": userAgent]))
            }
            switch response.status {
            case 200:
                do {
                    found.append(try Video(JSONDecoder().decode(PeerTubeVideo.self, from: response.body), id: id, instance: link.instance))
                } catch {
                    log.notice("PeerTube video \(Terminal.safe(id.rawValue, limit: 200)) left unresolved: \(Terminal.safe("\(error)", limit: 300))")
                }
            case 404, 410: continue
            case 429: throw ServiceError(.rateLimited(until: response.header("Retry-After").flatMap(Double.init).map { Date().addingTimeInterval(min($0, 3600)) }),
                                         operation, "the instance answered 429")
            default: throw ServiceError(.unavailable, operation, "the instance answered \(response.status)")
            }
        }
        return found
    }
}
