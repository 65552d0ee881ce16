import Foundation

/// A status as the Mastodon client API sends it (only the fields feedsync keeps).
struct MastodonStatus: Decodable {
    var id: String
    var created_at: String
    var in_reply_to_id: String?
    var spoiler_text: String?
    var visibility: String?
    var language: String?
    var replies_count: Int?
    var reblogs_count: Int?
    var favourites_count: Int?
    var edited_at: String?
    var content: String?
    var reblog: Box<MastodonStatus>?
    var account: MastodonAccount
    var media_attachments: [MastodonMediaAttachment]?
}

/// An account (`Account` entity).
struct MastodonAccount: Decodable, Hashable {
    var id: String
    var username: String?
    var acct: String
    var display_name: String?
    var avatar: String?
}

/// A media attachment (`MediaAttachment` entity); `meta` varies by type and server.
struct MastodonMediaAttachment: Decodable {
    struct Meta: Decodable {
        struct Original: Decodable {
            var width: Int?
            var height: Int?
            var frame_rate: String?
            var duration: Double?
        }
        var original: Original?
    }

    var id: String
    var type: String
    var url: String?
    var preview_url: String?
    var remote_url: String?
    var description: String?
    var meta: Meta?
}

/// The body of an error response: `{"error": "…"}`.
struct MastodonError: Decodable {
    var error: String
}

/// Lets a struct hold an optional value of its own type (a reblog's original status).
final class Box<Value: Decodable>: Decodable {
    let value: Value
    required init(from decoder: any Decoder) throws { value = try Value(from: decoder) }
}
