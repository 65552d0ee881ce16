import Core
import Foundation

/// The catalog file: `{"videos": [CatalogVideo, …]}`.
struct Catalog: Decodable {
    var videos: [CatalogVideo]
}

/// One video as the fixture catalog describes it.
struct CatalogVideo: Decodable {
    var id: String
    var title: String
    var durationSeconds: Double
    var streamURL: String
    var thumbnailURL: String?
    var sizeBytes: Int64?

    private enum CodingKeys: String, CodingKey {
        case id, title, durationSeconds = "duration_seconds", streamURL = "stream_url", thumbnailURL = "thumbnail_url", sizeBytes = "size_bytes"
    }
}

extension Video {
    /// Maps a catalog entry, refusing one with an empty id or an unusable URL.
    init(_ dto: CatalogVideo) throws {
        guard !dto.id.isEmpty else { throw ServiceError(.invalidItem, "reading the video catalog", "a video has an empty id") }
        guard let stream = URL(string: dto.streamURL), stream.scheme != nil else {
            throw ServiceError(.invalidItem, "reading video \(dto.id) of the catalog", "\"\(dto.streamURL)\" is not a URL")
        }
        guard dto.durationSeconds.isFinite, dto.durationSeconds >= 0 else {
            throw ServiceError(.invalidItem, "reading video \(dto.id) of the catalog", "duration \(dto.durationSeconds) is invalid")
        }
        self.init(id: VideoID(dto.id), title: dto.title, duration: dto.durationSeconds, streamURL: stream,
                  thumbnailURL: dto.thumbnailURL.flatMap(URL.init(string:)), sizeBytes: dto.sizeBytes)
    }
}
