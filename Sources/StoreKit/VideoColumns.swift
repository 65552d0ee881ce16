import Core
import Foundation

/// A resolved `videos` row, named as both stores name its columns.
public struct VideoColumns: Hashable, Sendable, Encodable {
    public var id: String
    public var title: String
    public var durationMs: Int64
    public var streamURL: String
    public var thumbnailURL: String?
    public var sizeBytes: Int64?
    public var width: Int64?
    public var height: Int64?
    public var fps: Double?
    public var viewCount: Int64?
    public var rating: Double?
    public var likeCount: Int64?
    public var author: String?

    /// The columns, with the SQL type each is declared with.
    public static let columns: [(name: String, kind: ColumnKind)] = [
        ("id", .text), ("title", .text), ("duration_ms", .integer), ("stream_url", .text), ("thumbnail_url", .text),
        ("size_bytes", .integer), ("width", .integer), ("height", .integer), ("fps", .real), ("view_count", .integer), ("rating", .real),
        ("like_count", .integer), ("author", .text),
    ]

    /// The column names, in ``columns`` order: what a read selects and a write binds.
    public static let names = columns.map(\.name)

    private enum CodingKeys: String, CodingKey {
        case id, title, durationMs = "duration_ms", streamURL = "stream_url", thumbnailURL = "thumbnail_url",
             sizeBytes = "size_bytes", width, height, fps, viewCount = "view_count", rating,
             likeCount = "like_count", author
    }

    public init(_ video: Video) {
        id = video.id.rawValue
        title = video.title
        // Integrations bound durations, but no value from outside may trap the conversion.
        durationMs = Int64(exactly: (video.duration * 1000).rounded()) ?? 0
        streamURL = video.stream.absoluteString
        thumbnailURL = video.thumbnail?.absoluteString
        sizeBytes = video.sizeBytes
        width = video.width.map(Int64.init)
        height = video.height.map(Int64.init)
        fps = video.framesPerSecond
        viewCount = video.viewCount.map(Int64.init)
        rating = video.rating
        likeCount = video.likeCount.map(Int64.init)
        author = video.author
    }

    /// The rows as a JSON array of objects keyed by column name, for a `jsonb` parameter
    /// (`jsonb_to_recordset`): keys sorted, absent values left out, as `JSONEncoder` wrote them
    /// from this type's `Encodable` form (which `StoreKitTests` keeps as the reference).
    public static func json(_ rows: [VideoColumns], dialect: SQLDialect) -> String {
        var json = JSONWriter(escaping: dialect.jsonEscaping, reserving: rows.count * 240)
        json.openArray()
        for row in rows {
            json.openObject()
            json.string("author", row.author)
            json.int("duration_ms", row.durationMs)
            json.double("fps", row.fps)
            json.int("height", row.height)
            json.string("id", row.id)
            json.int("like_count", row.likeCount)
            json.double("rating", row.rating)
            json.int("size_bytes", row.sizeBytes)
            json.string("stream_url", row.streamURL)
            json.string("thumbnail_url", row.thumbnailURL)
            json.string("title", row.title)
            json.int("view_count", row.viewCount)
            json.int("width", row.width)
            json.closeObject()
        }
        json.closeArray()
        return json.text
    }

    /// Where each column is in a query's result, looked up by name once per query.
    public struct Positions: Sendable {
        let at: [Int]

        /// - Throws: ``MissingColumn`` when the query lacks one of ``VideoColumns/names``.
        public init(_ layout: ColumnLayout) throws {
            at = try VideoColumns.names.map(layout.position(of:))
        }
    }

    public init(_ row: some ResultRow, at positions: Positions) {
        let at = positions.at
        id = row.text(at[0]) ?? ""
        title = row.text(at[1]) ?? ""
        durationMs = row.integer(at[2]) ?? 0
        streamURL = row.text(at[3]) ?? ""
        thumbnailURL = row.text(at[4])
        sizeBytes = row.integer(at[5])
        width = row.integer(at[6])
        height = row.integer(at[7])
        fps = row.real(at[8])
        viewCount = row.integer(at[9])
        rating = row.real(at[10])
        likeCount = row.integer(at[11])
        author = row.text(at[12])
    }

    /// The video, or `nil` for a row whose stream URL no longer parses (written by another tool, say).
    public var video: Video? {
        guard let stream = URL(string: streamURL) else { return nil }
        return Video(id: VideoID(id), title: title, duration: Double(durationMs) / 1000, streamURL: stream,
                     thumbnailURL: thumbnailURL.flatMap(URL.init(string:)), sizeBytes: sizeBytes,
                     width: width.map { Int(clamping: $0) }, height: height.map { Int(clamping: $0) }, framesPerSecond: fps,
                     viewCount: viewCount.map { Int(clamping: $0) }, rating: rating,
                     likeCount: likeCount.map { Int(clamping: $0) }, author: author)
    }
}
