import Core
import Foundation
import IntegrationKit

/// What YouTube's oEmbed endpoint says of a video (oEmbed 1.0, type `video`).
struct YouTubeOEmbed: Decodable {
    var title: String
    var authorName: String?
    var thumbnailURL: String?

    private enum CodingKeys: String, CodingKey {
        case title, authorName = "author_name", thumbnailURL = "thumbnail_url"
    }
}

/// Resolves `youtube:ID` videos through YouTube's oEmbed endpoint, which needs no key: the
/// title, the author's name (`author_name`, kept when 1 to 200 characters) and thumbnail.
///
/// A video oEmbed will not describe (401: embedding disabled or private; 404: removed) is left as
/// it is, with one line in the log saying why; a 429 or 5xx fails the batch for a later sync.
struct YouTubeOEmbedService: VideoService {
    let endpoint: URL
    let transport: any HTTPTransport
    let hosts: HostGate
    let requests: RequestCounter
    let log: Logger
    let userAgent: String

    func videos(withIDs ids: [VideoID]) async throws -> [Video] {
        var found: [Video] = []
        for id in ids where id.rawValue.hasPrefix("youtube:") {
            let videoID = String(id.rawValue.dropFirst("youtube:".count))
            guard let watch = URL(string: "https://www.youtube.com/watch?v=\(videoID)"), YouTubeWatchLink.videoID(in: watch) == videoID,
                  var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false) else { continue }
            components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "url", value: watch.absoluteString),
                                                                     URLQueryItem(name: "format", value: "json")]
            guard let url = components.url else { continue }
            let response = try await hosts.withPermit(for: Origin(url)?.gateKey ?? "") { [transport, requests, userAgent] in
                requests.add(1)
                return try await transport.send(HTTPRequest(url: url, headers: ["Accept": "application/json", "User-Agent": userAgent]))
            }
            let operation = "GET \(Origin(url)?.description ?? "")\(url.path)"
            switch response.status {
            case 200:
                guard let oembed = try? JSONDecoder().decode(YouTubeOEmbed.self, from: response.body), oembed.title.count <= 1_000 else {
                    log.notice("YouTube video \(videoID) left as it is: its oEmbed answer cannot be read")
                    continue
                }
                let thumbnail = oembed.thumbnailURL.flatMap(URL.init(string:)).flatMap { ["http", "https"].contains($0.scheme?.lowercased() ?? "") ? $0 : nil }
                let author = oembed.authorName.flatMap { (1...200).contains($0.count) ? $0 : nil }
                found.append(Video(id: id, title: oembed.title, duration: 0, streamURL: watch, thumbnailURL: thumbnail, author: author))
            case 401, 403, 404:
                log.notice("YouTube video \(videoID) left as it is: oEmbed answered \(response.status) "
                           + (response.status == 404 ? "(removed or never there)" : "(private, or its embedding is disabled)"))
            case 429: throw ServiceError(.rateLimited(until: nil), operation, "the oEmbed endpoint answered 429")
            default: throw ServiceError(.unavailable, operation, "the oEmbed endpoint answered \(response.status)")
            }
        }
        return found
    }
}
