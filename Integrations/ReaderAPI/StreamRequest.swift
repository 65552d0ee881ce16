import Core
import Foundation

/// What `stream/items/ids` and `stream/contents` ask for, checked: the stream (`s`, or the
/// path's tail), what to leave out (`xt`) or keep (`it`), since and until when (`ot`, `nt`),
/// how many (`n`), the order (`r`: newest or oldest first) and where to go on from (`c`).
struct StreamRequest {
    static let reading = "user/-/state/com.google/reading-list"
    static let read = "user/-/state/com.google/read"
    static let starred = "user/-/state/com.google/starred"
    /// The most items one answer holds.
    static let maximumCount = 10_000

    var query: PostQuery
    var streamID: String
    /// For a label's stream: the feeds of that group (``query`` then names none).
    var feeds: [String]? = nil

    /// - Returns: the request, or the one line a 400 says.
    static func parse(_ fields: FormFields, stream given: String?, feeds: [ServedFeed], defaultCount: Int) -> Result<StreamRequest, StreamError> {
        let stream = given ?? fields["s"] ?? reading
        var query = PostQuery(limit: defaultCount)
        var members: [String]?
        switch stream {
        case reading: break
        case starred: query.starredOnly = true
        default:
            if stream.hasPrefix("feed/"), feeds.contains(where: { $0.name == stream.dropFirst(5) }) {
                query.feed = String(stream.dropFirst(5))
            } else if stream.hasPrefix("user/-/label/"), case let group = String(stream.dropFirst("user/-/label/".count)),
                      feeds.contains(where: { $0.group == group }) {
                members = feeds.filter { $0.group == group }.map(\.name)
            } else {
                return .failure(StreamError("unknown stream \(shown(stream)): the streams are \(reading), \(starred), feed/NAME and user/-/label/GROUP"))
            }
        }
        for excluded in fields.all("xt") {
            guard excluded == read else { return .failure(StreamError("xt=\(shown(excluded)) is not served: only xt=\(read)")) }
            query.unreadOnly = true
        }
        for included in fields.all("it") {
            guard included == starred else { return .failure(StreamError("it=\(shown(included)) is not served: only it=\(starred)")) }
            query.starredOnly = true
        }
        if let text = fields["n"] {
            guard text.count <= 6, let count = Int(text), (1...maximumCount).contains(count) else {
                return .failure(StreamError("n=\(shown(text)) is not a count from 1 to \(maximumCount)"))
            }
            query.limit = count
        }
        for (key, path) in [("ot", \PostQuery.since), ("nt", \PostQuery.until)] {
            guard let text = fields[key] else { continue }
            guard text.count <= 12, let seconds = Int64(text), seconds >= 0 else {
                return .failure(StreamError("\(key)=\(shown(text)) is not a time in seconds since 1970"))
            }
            query[keyPath: path] = Date(timeIntervalSince1970: TimeInterval(seconds))
        }
        switch fields["r"] {
        case nil, "n", "d": break
        case "o": query.oldestFirst = true
        case let order?: return .failure(StreamError("r=\(shown(order)) is not an order: r=n (newest first, the default) or r=o (oldest first)"))
        }
        if let text = fields["c"] {
            guard let (position, oldestFirst) = Continuation.parse(text, feeds: feeds) else {
                return .failure(StreamError("c=\(shown(text)) is not a continuation this server gave"))
            }
            guard oldestFirst == query.oldestFirst else {
                return .failure(StreamError("c=\(shown(text)) continues the other order: ask with r=\(oldestFirst ? "o" : "n") as the first page did"))
            }
            query.continuing = position
        }
        return .success(StreamRequest(query: query, streamID: stream, feeds: members))
    }

    static func shown(_ text: String) -> String { Terminal.safe(text, limit: 100) }
}

/// Why a stream request is refused: one line, for a 400.
struct StreamError: Error {
    let line: String
    init(_ line: String) { self.line = line }
}

/// A continuation: where the listing stands after the last item of a page, as `c1` (newest
/// first) or `o1` (oldest first) and the hex of its time, feed and id. Parsed strictly, so one
/// this server did not give is refused.
enum Continuation {
    static func make(_ position: StoredPost.ListingPosition, oldestFirst: Bool = false) -> String {
        let text = "\(Int64((position.createdAt.timeIntervalSince1970 * 1000).rounded()))\n\(position.feed)\n\(position.id.rawValue)"
        return (oldestFirst ? "o1" : "c1") + text.utf8.map { String(format: "%02x", $0) }.joined()
    }

    /// The position and whether it continues the oldest-first order; `nil` when not ours.
    static func parse(_ text: String, feeds: [ServedFeed]) -> (StoredPost.ListingPosition, oldestFirst: Bool)? {
        guard text.hasPrefix("c1") || text.hasPrefix("o1"), text.count <= 4_002, text.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = text.index(text.startIndex, offsetBy: 2)
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else { return nil }
        let parts = decoded.split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count <= 15, let milliseconds = Int64(parts[0]), milliseconds >= 0,
              feeds.contains(where: { $0.name == parts[1] }), !parts[2].isEmpty else { return nil }
        let position = StoredPost.ListingPosition(createdAt: Date(timeIntervalSince1970: Double(milliseconds) / 1000),
                                                  feed: String(parts[1]), id: PostID(String(parts[2])))
        return (position, text.hasPrefix("o1"))
    }
}
