import Core
import Foundation
import IntegrationKit

/// The AppView's answers as the lexicons describe them (`app.bsky.feed.defs`,
/// `app.bsky.embed.*`, `app.bsky.richtext.facet`, `com.atproto.label.defs`), keeping only the
/// fields feedsync maps. Strings stay as the server sent them; ``Post/init(_:)`` checks them.

/// `app.bsky.actor.defs#profileViewBasic`.
struct BlueskyProfile: Hashable {
    var did: String
    var handle: String
    var displayName: String?
    var avatar: String?

    /// The DID alone: equal profiles have equal DIDs, and a page's authors are looked up by
    /// profile once or twice a post (hashing all four fields was 0.7% of a Bluesky pull's samples).
    func hash(into hasher: inout Hasher) {
        hasher.combine(did)
    }
}

/// `com.atproto.label.defs#label` (or a self-label's value, with `neg` false).
struct BlueskyLabel: Hashable {
    var val: String
    var neg: Bool
}

/// `app.bsky.richtext.facet`: a UTF-8 byte range of the text and what it points to.
struct BlueskyFacet: Hashable {
    enum Feature: Hashable {
        case link(uri: String)
        case mention(did: String)
        case tag(String)
    }

    var byteStart: Int
    var byteEnd: Int
    var features: [Feature]
}

/// The fields of an `app.bsky.feed.post` record that are kept.
struct BlueskyPostRecord: Hashable {
    var text = ""
    var createdAt: String?
    var facets: [BlueskyFacet] = []
    var langs: [String] = []
    /// `reply.parent.uri`: the post this one answers.
    var replyParent: String?
    /// The values of `labels` (`com.atproto.label.defs#selfLabels`).
    var selfLabels: [String] = []
}

/// `app.bsky.embed.defs#aspectRatio`.
struct BlueskyAspectRatio: Hashable {
    var width: Int
    var height: Int
}

/// `app.bsky.embed.images#viewImage`.
struct BlueskyImageView: Hashable {
    var thumb: String?
    var fullsize: String?
    var alt: String?
    var aspectRatio: BlueskyAspectRatio?
}

/// `app.bsky.embed.video#view`.
struct BlueskyVideoView: Hashable {
    var cid: String?
    var playlist: String?
    var thumbnail: String?
    var alt: String?
    var aspectRatio: BlueskyAspectRatio?
}

/// `app.bsky.embed.external#viewExternal`: a link card.
struct BlueskyExternalView: Hashable {
    var uri: String?
    var title: String?
    var description: String?
    var thumb: String?
}

/// A post view's `embed` union.
indirect enum BlueskyEmbedView: Hashable {
    case images([BlueskyImageView])
    case video(BlueskyVideoView)
    case external(BlueskyExternalView)
    /// `app.bsky.embed.record#view`: the URI of the embedded record (a quoted post, or a
    /// feed, list… which is not a post), whichever of its view types the server sent.
    case record(uri: String?)
    /// `app.bsky.embed.recordWithMedia#view`.
    case recordWithMedia(uri: String?, media: BlueskyEmbedView?)
    /// A type this version does not know (`app.bsky.embed.gallery#view`…): ignored.
    case unknown(type: String?)
}

/// `app.bsky.feed.defs#postView`.
struct BlueskyPostView: Hashable {
    var uri: String
    var cid: String?
    var author: BlueskyProfile
    var record: BlueskyPostRecord
    var embed: BlueskyEmbedView?
    var replyCount: Int?
    var repostCount: Int?
    var likeCount: Int?
    var quoteCount: Int?
    var indexedAt: String
    var labels: [BlueskyLabel]
}

/// `app.bsky.feed.defs#reasonRepost`.
struct BlueskyRepostReason: Hashable {
    var by: BlueskyProfile
    /// The repost record's own URI (newer AppViews send it).
    var uri: String?
    var indexedAt: String
}

/// `app.bsky.feed.defs#feedViewPost`: a post, and why it is in the timeline.
struct BlueskyFeedItem: Hashable {
    var post: BlueskyPostView
    var repost: BlueskyRepostReason?
    /// A `reasonPin`: the author's pinned post, shown on top out of time order.
    var pinned = false

    /// The id the item is stored under: its post's URI; for a repost, the repost record's URI
    /// when that is a repost in the reposter's repository, else the post's URI and the reposter.
    static func postID(uri: String, repostURI: String?, reposter: String?) -> PostID {
        guard let reposter else { return PostID(uri) }
        if let repostURI, let parsed = BlueskyIdentifier.atURI(repostURI, collection: "app.bsky.feed.repost"), parsed.authority == reposter {
            return PostID(repostURI)
        }
        return PostID("\(uri)#repost-by-\(reposter)")
    }

    /// The id this item is stored under (see ``postID(uri:repostURI:reposter:)``).
    var postID: PostID { Self.postID(uri: post.uri, repostURI: repost?.uri, reposter: repost?.by.did) }
}

/// The body of an XRPC error: `{"error": "ExpiredToken", "message": "…"}`, read with
/// IntegrationKit's ``JSONReader``; a field that is missing or not a string is `nil`.
struct BlueskyError {
    var error: String?
    var message: String?

    init(body: Data) {
        error = JSONReader.string(at: ["error"], in: body)
        message = JSONReader.string(at: ["message"], in: body)
    }
}

/// `com.atproto.server.createSession` and `refreshSession` output (the fields kept).
struct BlueskySessionResponse {
    var accessJwt: String
    var refreshJwt: String
    var did: String?
}
