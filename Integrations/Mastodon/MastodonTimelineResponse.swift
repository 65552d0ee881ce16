import Core
import Foundation
import IntegrationKit

/// A page of a timeline method (`GET /api/v1/timelines/home` and the others feedsync reads):
/// a JSON array of `Status` entities, newest first.
///
/// A status whose fields are missing or mistyped becomes `.unreadable` with its reason, so one
/// bad status drops only itself; only a body that is not JSON, or not an array, fails the page.
struct MastodonTimelineResponse {
    enum Item {
        case status(MastodonStatus)
        /// A status that cannot be read: its id when it has a string one, and why.
        case unreadable(id: String?, reason: String)
    }

    var items: [Item]

    /// Reads a page body.
    ///
    /// - Throws: `JSONReader.SyntaxError` when the body is not JSON, `JSONReader.FieldError`
    ///   when it is not an array.
    init(body: Data) throws {
        items = try body.withUnsafeBytes { raw in
            var reader = JSONReader(raw.bindMemory(to: UInt8.self))
            guard try reader.peek() == UInt8(ascii: "[") else { throw JSONReader.FieldError(reason: "the body is not an array") }
            var items: [Item] = []
            items.reserveCapacity(40)
            var accounts = MastodonAccountCache()
            try reader.readArray { reader in items.append(try Item(reading: &reader, accounts: &accounts)) }
            guard reader.isAtEnd else { throw JSONReader.SyntaxError(offset: reader.offset, reason: "data follows the array") }
            return items
        }
    }
}

extension MastodonTimelineResponse.Item {
    init(reading reader: inout JSONReader, accounts: inout MastodonAccountCache) throws {
        let start = reader.offset
        do {
            self = .status(try MastodonStatus(reading: &reader, accounts: &accounts))
        } catch let error as JSONReader.FieldError {
            // Read the status again as plain JSON, for its id; a syntax error there fails the page.
            reader.rewind(to: start)
            self = .unreadable(id: try MastodonStatus.id(reading: &reader), reason: error.reason)
        }
    }
}

extension MastodonTimelineResponse {
    /// A page's statuses mapped into Core, newest first as on the wire. A status that cannot be
    /// read or mapped goes to `skipped` with its reason; the rest of the page stands.
    ///
    /// - Returns: the posts, the skipped statuses, and the videos the posts' attachments
    ///   describe (statuses carry their videos' metadata, so the sync need not look them up).
    func mapped() -> (posts: [Post], skipped: [SkippedItem], videos: [VideoID: Video]) {
        var avatars: [String: WebLink?] = [:]
        return mapped(avatars: &avatars)
    }

    /// ``mapped()``, reusing the avatar links checked earlier (a stream's statuses, one event each).
    func mapped(avatars: inout [String: WebLink?]) -> (posts: [Post], skipped: [SkippedItem], videos: [VideoID: Video]) {
        var posts: [Post] = []
        var skipped: [SkippedItem] = []
        var videos: [VideoID: Video] = [:]
        var statusVideos: [Video] = []
        posts.reserveCapacity(items.count)
        for item in items {
            switch item {
            case .unreadable(let id, let reason):
                skipped.append(SkippedItem(id: id, reason: reason, postID: id.flatMap { $0.isEmpty ? nil : PostID($0) }))
            case .status(let status):
                do {
                    statusVideos.removeAll(keepingCapacity: true)
                    posts.append(try Post(status, avatars: &avatars, videos: &statusVideos))
                    for video in statusVideos { videos[video.id] = video }
                } catch let error as ServiceError {
                    skipped.append(SkippedItem(id: status.id.isEmpty ? nil : status.id, reason: error.reason, postID: status.postID))
                } catch {
                    skipped.append(SkippedItem(id: status.id.isEmpty ? nil : status.id, reason: "it cannot be mapped", postID: status.postID))
                }
            }
        }
        return (posts, skipped, videos)
    }
}

extension MastodonStatus {
    /// The id the status is stored under (a reblog's own id, its place in the timeline); `nil`
    /// when it is empty.
    var postID: PostID? { id.isEmpty ? nil : PostID(id) }
}
