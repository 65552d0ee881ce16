import Core
import Foundation

/// A video as PeerTube's `GET /api/v1/videos/{id}` describes it (the fields feedsync reads;
/// see the PeerTube REST API reference, `VideoDetails`).
struct PeerTubeVideo: Decodable {
    struct Resolution: Decodable {
        var id: Int
    }

    struct File: Decodable {
        var resolution: Resolution?
        var size: Int64?
        var fps: Double?
        var fileUrl: String?
    }

    struct StreamingPlaylist: Decodable {
        /// 1: HLS.
        var type: Int
        var playlistUrl: String?
        var files: [File]?
    }

    var uuid: String
    var shortUUID: String?
    var name: String
    /// Seconds.
    var duration: Double?
    var views: Int?
    var likes: Int?
    var thumbnailPath: String?
    var previewPath: String?
    var files: [File]?
    var streamingPlaylists: [StreamingPlaylist]?
}

extension Video {
    /// The video of `dto`, named `id` (the watch URL the post linked), on `instance`.
    ///
    /// The stream is the largest progressive file when the instance serves one, else the HLS
    /// playlist (which the media archive joins from its best variant). Sizes, resolutions and
    /// frame rates are the chosen file's. Every URL must be http(s), on any host (PeerTube
    /// serves files from object storage elsewhere): the media archive's rules apply to them.
    ///
    /// - Throws: ``ServiceError`` `.invalidItem` for a video with no usable stream, a title
    ///   over 1,000 characters, or numbers out of range.
    init(_ dto: PeerTubeVideo, id: VideoID, instance: URL) throws {
        func url(_ text: String?) -> URL? {
            guard let text, let url = URL(string: text, relativeTo: instance)?.absoluteURL,
                  let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return nil }
            return url
        }
        let operation = "resolving PeerTube video \(id.rawValue)"
        let progressive = (dto.files ?? []).filter { url($0.fileUrl) != nil }.max { ($0.resolution?.id ?? 0) < ($1.resolution?.id ?? 0) }
        let hls = dto.streamingPlaylists?.first { $0.type == 1 && url($0.playlistUrl) != nil }
        let best = progressive ?? hls?.files?.max { ($0.resolution?.id ?? 0) < ($1.resolution?.id ?? 0) }
        guard let stream = url(progressive?.fileUrl) ?? url(hls?.playlistUrl) else {
            throw ServiceError(.invalidItem, operation, "the instance lists no http(s) file or HLS playlist for it")
        }
        let duration = dto.duration ?? 0
        guard dto.name.count <= 1_000, (0...1_000_000).contains(duration), (best?.size ?? 0) >= 0,
              (dto.views ?? 0) >= 0, (dto.likes ?? 0) >= 0 else {
            throw ServiceError(.invalidItem, operation, "the instance describes it with a value out of range")
        }
        let height = best?.resolution?.id
        self.init(id: id, title: dto.name, duration: duration, streamURL: stream, thumbnailURL: url(dto.thumbnailPath ?? dto.previewPath),
                  sizeBytes: best?.size, width: height.map { $0 * 16 / 9 }, height: height, framesPerSecond: best?.fps,
                  viewCount: dto.views, likeCount: dto.likes)
    }
}
