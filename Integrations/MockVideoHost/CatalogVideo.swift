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
    var duration_seconds: Double
    var stream_url: String
    var thumbnail_url: String?
    var size_bytes: Int64?
}

extension Video {
    /// Maps a catalog entry, refusing one with an empty id or an unusable URL.
    init(_ dto: CatalogVideo) throws {
        guard !dto.id.isEmpty else { throw ServiceError(.invalidItem, "reading the video catalog", "a video has an empty id") }
        guard let stream = URL(string: dto.stream_url), stream.scheme != nil else {
            throw ServiceError(.invalidItem, "reading video \(dto.id) of the catalog", "\"\(dto.stream_url)\" is not a URL")
        }
        guard dto.duration_seconds.isFinite, dto.duration_seconds >= 0 else {
            throw ServiceError(.invalidItem, "reading video \(dto.id) of the catalog", "duration \(dto.duration_seconds) is invalid")
        }
        self.init(id: VideoID(dto.id), title: dto.title, duration: dto.duration_seconds, streamURL: stream,
                  thumbnailURL: dto.thumbnail_url.flatMap(URL.init(string:)), sizeBytes: dto.size_bytes)
    }
}
