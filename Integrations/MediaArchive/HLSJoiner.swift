import Core
import Foundation
import IntegrationKit
#if canImport(Glibc)
import Glibc
#endif

/// Fetches an HLS video as one file: the best variant's initialization section and segments,
/// in order, joined (RFC 8216 §3: segments of one variant are consecutive parts of one stream).
///
/// A playlist that leads back to one already read, nests more than ``maxDepth`` deep, or lists
/// more segments than ``Core/MediaLimits/maxSegments`` is refused before any segment is fetched.
struct HLSJoiner {
    let fetcher: MediaFetcher
    /// Playlists read at most for one video: a multivariant playlist, then a media playlist.
    static let maxDepth = 3
    /// The largest playlist text read.
    static let maxPlaylistBytes = 4 << 20

    func fetch(_ item: MediaItem, limits: MediaLimits, credential: MediaCredential?) async throws -> (String, Int64, String?) {
        let started = Date()
        let playlist = try await mediaPlaylist(at: item.url, limits: limits)
        let parts = (playlist.map.map { [$0] } ?? []) + playlist.segments
        guard !parts.isEmpty else { throw DownloadRefusal("the playlist lists no segment") }
        guard playlist.segments.count <= limits.maxSegments else {
            throw DownloadRefusal("the playlist lists \(playlist.segments.count) segments, more than the \(limits.maxSegments) accepted")
        }
        // Segments are joined from the start on every attempt: a partial join has no byte offset to resume.
        fetcher.folder.removePartial(of: item.url)
        let (file, _) = try fetcher.folder.openPartial(of: item.url)
        defer { Glibc.close(file) }
        var total: Int64 = 0
        var type: String?
        for part in parts {
            guard total < limits.maxItemBytes else { throw DownloadRefusal("the video is larger than the \(limits.maxItemBytes) bytes allowed (maxItemBytes)") }
            let answer = try await fetcher.get(part, into: file, from: 0, cap: limits.maxItemBytes - total,
                                               bound: "the \(limits.maxItemBytes) bytes allowed (maxItemBytes) for the whole video", limits: limits, started: started,
                                               credential: credential) { _, headers in
                MediaTypeCheck.mismatch(kind: .video, expected: "video/mp2t", received: headers["content-type"])
            }
            if let length = MediaFetcher.expectedTotal(answer, resumedFrom: 0), length != answer.written {
                throw ServiceError(.unavailable, "GET \(part.absoluteString)", "a segment was cut short (\(answer.written) of \(length) bytes)")
            }
            total += answer.written
            type = type ?? answer.header("content-type").map { Terminal.safe($0, limit: 100) }
        }
        let digest = try fetcher.folder.install(partialOf: item.url)
        return (digest, total, type)
    }

    /// The media playlist `url` leads to: itself, or the best variant of a multivariant one.
    private func mediaPlaylist(at url: URL, limits: MediaLimits) async throws -> HLSPlaylist {
        let transport = CurlTransport(limits: HTTPLimits(idleTimeout: limits.idleTimeout, deadline: min(limits.deadline, 120),
                                                         maxBodyBytes: Self.maxPlaylistBytes, maxRedirects: 3))
        defer { Task { await transport.close() } }
        var seen: Set<String> = []
        var current = url
        for _ in 0..<Self.maxDepth {
            guard seen.insert(current.absoluteString).inserted else {
                throw DownloadRefusal("the playlist leads back to \(Terminal.safe(current.absoluteString, limit: 120)), which was read already")
            }
            let response: HTTPResponse
            do {
                response = try await transport.send(HTTPRequest(url: current))
            } catch let error as ServiceError where error.code == .contractViolation {
                throw DownloadRefusal(error.reason)
            }
            guard response.status == 200 else {
                throw ServiceError(.unavailable, "GET \(current.absoluteString)", "the server answered \(response.status) for the playlist")
            }
            let playlist: HLSPlaylist
            do {
                playlist = try HLSPlaylist(String(decoding: response.body, as: UTF8.self), base: current)
            } catch let error as PlaylistError {
                throw DownloadRefusal(error.description)
            }
            guard let best = playlist.best else { return playlist }
            current = best.url
        }
        throw DownloadRefusal("the playlists nest more than \(Self.maxDepth) deep")
    }
}
