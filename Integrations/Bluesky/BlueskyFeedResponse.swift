import Core
import Foundation
import IntegrationKit

/// A page of a feed method (`{"cursor": …, "feed": [feedViewPost]}`) or of `searchPosts`
/// (`{"cursor": …, "posts": [postView]}`), read with the forward-only ``JSONReader``.
///
/// An item whose fields are missing or mistyped becomes `.unreadable` with its reason, so one
/// bad item drops only itself; only broken JSON, or a page without its list, fails the page.
struct BlueskyFeedResponse {
    enum Entry {
        case item(BlueskyFeedItem)
        /// `postID`: the id the item would be stored under, when it says it exactly.
        case unreadable(id: String?, postID: PostID?, reason: String)
    }

    var entries: [Entry]
    var cursor: String?

    /// Limits on what one item may hold, far above what the lexicons allow.
    static let maxItemsPerPage = 1_000
    static let maxListLength = 1_000

    /// - Throws: `JSONReader.SyntaxError` when the body is not JSON, `JSONReader.FieldError`
    ///   when the page lacks or mistypes its list or cursor.
    init(body: Data, barePosts: Bool) throws {
        let listKey = barePosts ? "posts" : "feed"
        (entries, cursor) = try body.withUnsafeBytes { raw in
            var reader = JSONReader(raw.bindMemory(to: UInt8.self))
            var entries: [Entry]?, cursor: String?
            guard try reader.peek() == UInt8(ascii: "{") else { throw JSONReader.FieldError(reason: "the page is not an object") }
            try reader.readObject { reader, key in
                switch key {
                case listKey:
                    guard try reader.peek() == UInt8(ascii: "[") else { throw JSONReader.FieldError(reason: "\(listKey) is not an array") }
                    var list: [Entry] = []
                    list.reserveCapacity(100)
                    try reader.readArray { reader in
                        guard list.count < Self.maxItemsPerPage else {
                            throw JSONReader.FieldError(reason: "\(listKey) has more than \(Self.maxItemsPerPage) items")
                        }
                        list.append(try Self.entry(&reader, barePost: barePosts))
                    }
                    entries = list
                case "cursor": cursor = try reader.optionalString("cursor")
                default: try reader.skipValue()
                }
            }
            guard reader.isAtEnd else { throw JSONReader.SyntaxError(offset: reader.offset, reason: "data follows the page") }
            guard let entries else { throw JSONReader.FieldError(reason: "\(listKey) is missing") }
            return (entries, cursor)
        }
    }

    private static func entry(_ reader: inout JSONReader, barePost: Bool) throws -> Entry {
        let start = reader.offset
        var seenURI: String?
        do {
            if barePost { return .item(BlueskyFeedItem(post: try post(&reader, path: "post", uri: &seenURI))) }
            return .item(try feedItem(&reader, uri: &seenURI))
        } catch let error as JSONReader.FieldError {
            // Read the item again as plain JSON, for the id it is stored under; a syntax error
            // there fails the page.
            reader.rewind(to: start)
            return .unreadable(id: seenURI, postID: try listedID(&reader, barePost: barePost), reason: error.reason)
        }
    }

    /// The id an item that could not be read would be stored under
    /// (``BlueskyFeedItem/postID(uri:repostURI:reposter:)``), read as plain JSON from the item's
    /// `post.uri` and repost reason; `nil` when the item does not say it exactly. Consumes the item.
    private static func listedID(_ reader: inout JSONReader, barePost: Bool) throws -> PostID? {
        /// The string under `key` of the object that comes next; `nil` for anything else.
        func field(_ key: String, of reader: inout JSONReader) throws -> String? {
            guard try reader.peek() == UInt8(ascii: "{") else {
                try reader.skipValue()
                return nil
            }
            var found: String?
            try reader.readObject { reader, name in
                guard name == key else { return try reader.skipValue() }
                do { found = try reader.string(key) } catch is JSONReader.FieldError { found = nil }
            }
            return found
        }
        if barePost { return try field("uri", of: &reader).map { PostID($0) } }
        guard try reader.peek() == UInt8(ascii: "{") else {
            try reader.skipValue()
            return nil
        }
        var uri: String?, reason: (type: String?, uri: String?, by: String?)?, readable = true
        try reader.readObject { reader, key in
            switch key {
            case "post": uri = try field("uri", of: &reader)
            case "reason":
                if try reader.readNull() { return }
                guard try reader.peek() == UInt8(ascii: "{") else {
                    readable = false
                    return try reader.skipValue()
                }
                var read: (type: String?, uri: String?, by: String?) = (nil, nil, nil)
                try reader.readObject { reader, key in
                    switch key {
                    case "$type":
                        do { read.type = try reader.string(key) } catch is JSONReader.FieldError { readable = false }
                    case "uri":
                        do { read.uri = try reader.optionalString(key) } catch is JSONReader.FieldError { readable = false }
                    case "by": read.by = try field("did", of: &reader)
                    default: try reader.skipValue()
                    }
                }
                reason = read
            default: try reader.skipValue()
            }
        }
        guard readable, let uri else { return nil }
        guard reason?.type == "app.bsky.feed.defs#reasonRepost" else { return PostID(uri) }
        guard let reposter = reason?.by else { return nil }
        return BlueskyFeedItem.postID(uri: uri, repostURI: reason?.uri, reposter: reposter)
    }

    // MARK: Items

    private static func feedItem(_ reader: inout JSONReader, uri: inout String?) throws -> BlueskyFeedItem {
        try expectObject(&reader, "the item")
        var post: BlueskyPostView?, reason: (type: String?, by: BlueskyProfile?, uri: String?, indexedAt: String?)?
        try reader.readObject { reader, key in
            switch key {
            case "post": post = try Self.post(&reader, path: "post", uri: &uri)
            case "reason":
                if try reader.readNull() { return }
                try expectObject(&reader, "reason")
                var read: (type: String?, by: BlueskyProfile?, uri: String?, indexedAt: String?) = (nil, nil, nil, nil)
                try reader.readObject { reader, key in
                    switch key {
                    case "$type": read.type = try reader.string("reason.$type")
                    case "by": read.by = try profile(&reader, path: "reason.by")
                    case "uri": read.uri = try reader.optionalString("reason.uri")
                    case "indexedAt": read.indexedAt = try reader.string("reason.indexedAt")
                    default: try reader.skipValue()
                    }
                }
                reason = read
            default: try reader.skipValue()
            }
        }
        guard let post else { throw JSONReader.FieldError(reason: "post is missing") }
        var item = BlueskyFeedItem(post: post)
        switch reason?.type {
        case nil: break
        case "app.bsky.feed.defs#reasonRepost"?:
            guard let by = reason?.by else { throw JSONReader.FieldError(reason: "reason.by is missing") }
            guard let indexedAt = reason?.indexedAt else { throw JSONReader.FieldError(reason: "reason.indexedAt is missing") }
            item.repost = BlueskyRepostReason(by: by, uri: reason?.uri, indexedAt: indexedAt)
        case "app.bsky.feed.defs#reasonPin"?: item.pinned = true
        default: break   // a reason this version does not know: the post as it is
        }
        return item
    }

    // The keys of the objects every item has, matched on the body's bytes (no string per key).
    private enum PostField: String, CaseIterable, Sendable {
        case uri, cid, author, record, embed, replyCount, repostCount, likeCount, quoteCount, indexedAt, labels
    }
    private enum ProfileField: String, CaseIterable, Sendable { case did, handle, displayName, avatar }
    private enum RecordField: String, CaseIterable, Sendable {
        case type = "$type", text, createdAt, langs, facets, reply, labels
    }
    private static let postFields = JSONKeys<PostField>()
    private static let profileFields = JSONKeys<ProfileField>()
    private static let recordFields = JSONKeys<RecordField>()

    private static func post(_ reader: inout JSONReader, path: @autoclosure () -> String, uri seenURI: inout String?) throws -> BlueskyPostView {
        try expectObject(&reader, path())
        var uri: String?, cid: String?, author: BlueskyProfile?, record: BlueskyPostRecord?, embed: BlueskyEmbedView?
        var replyCount: Int?, repostCount: Int?, likeCount: Int?, quoteCount: Int?
        var indexedAt: String?, labels: [BlueskyLabel] = []
        try reader.readObject(Self.postFields) { reader, key in
            switch key {
            case .uri?:
                uri = try reader.string("\(path()).uri")
                seenURI = uri
            case .cid?: cid = try reader.optionalString("\(path()).cid")
            case .author?: author = try profile(&reader, path: "\(path()).author")
            case .record?: record = try Self.record(&reader, path: "\(path()).record")
            case .embed?: embed = try Self.embed(&reader, path: "\(path()).embed", depth: 0)
            case .replyCount?: replyCount = try reader.optionalInt("\(path()).replyCount")
            case .repostCount?: repostCount = try reader.optionalInt("\(path()).repostCount")
            case .likeCount?: likeCount = try reader.optionalInt("\(path()).likeCount")
            case .quoteCount?: quoteCount = try reader.optionalInt("\(path()).quoteCount")
            case .indexedAt?: indexedAt = try reader.string("\(path()).indexedAt")
            case .labels?: labels = try Self.labels(&reader, path: "\(path()).labels")
            case nil: try reader.skipValue()
            }
        }
        guard let uri else { throw JSONReader.FieldError(reason: "\(path()).uri is missing") }
        guard let author else { throw JSONReader.FieldError(reason: "\(path()).author is missing") }
        guard let record else { throw JSONReader.FieldError(reason: "\(path()).record is missing") }
        guard let indexedAt else { throw JSONReader.FieldError(reason: "\(path()).indexedAt is missing") }
        return BlueskyPostView(uri: uri, cid: cid, author: author, record: record, embed: embed, replyCount: replyCount,
                               repostCount: repostCount, likeCount: likeCount, quoteCount: quoteCount, indexedAt: indexedAt, labels: labels)
    }

    private static func profile(_ reader: inout JSONReader, path: @autoclosure () -> String) throws -> BlueskyProfile {
        try expectObject(&reader, path())
        var did: String?, handle: String?, displayName: String?, avatar: String?
        try reader.readObject(Self.profileFields) { reader, key in
            switch key {
            case .did?: did = try reader.string("\(path()).did")
            case .handle?: handle = try reader.string("\(path()).handle")
            case .displayName?: displayName = try reader.optionalString("\(path()).displayName")
            case .avatar?: avatar = try reader.optionalString("\(path()).avatar")
            case nil: try reader.skipValue()
            }
        }
        guard let did else { throw JSONReader.FieldError(reason: "\(path()).did is missing") }
        guard let handle else { throw JSONReader.FieldError(reason: "\(path()).handle is missing") }
        return BlueskyProfile(did: did, handle: handle, displayName: displayName, avatar: avatar)
    }

    /// The post record (`unknown` in the lexicon: read what an `app.bsky.feed.post` holds).
    private static func record(_ reader: inout JSONReader, path: @autoclosure () -> String) throws -> BlueskyPostRecord {
        try expectObject(&reader, path())
        var record = BlueskyPostRecord()
        var type: String?
        try reader.readObject(Self.recordFields) { reader, key in
            switch key {
            case .type?: type = try reader.string("\(path()).$type")
            case .text?: record.text = try reader.string("\(path()).text")
            case .createdAt?: record.createdAt = try reader.string("\(path()).createdAt")
            case .langs?: record.langs = try list(&reader, "\(path()).langs") { try $0.string("\(path()).langs[]") }
            case .facets?:
                // A malformed facet (an index past Int, a missing byteEnd) costs only the facet: the
                // text stands without its link.
                record.facets = try list(&reader, "\(path()).facets") { reader -> BlueskyFacet? in
                    let start = reader.offset
                    do {
                        return try facet(&reader, path: "\(path()).facets[]")
                    } catch is JSONReader.FieldError {
                        reader.rewind(to: start)
                        try reader.skipValue()
                        return nil
                    }
                }.compactMap { $0 }
            case .reply?:
                try expectObject(&reader, "\(path()).reply")
                try reader.readObject { reader, key in
                    guard key == "parent" else { return try reader.skipValue() }
                    try expectObject(&reader, "\(path()).reply.parent")
                    try reader.readObject { reader, key in
                        if key == "uri" { record.replyParent = try reader.string("\(path()).reply.parent.uri") } else { try reader.skipValue() }
                    }
                }
            case .labels?:
                if try reader.readNull() { return }
                try expectObject(&reader, "\(path()).labels")
                try reader.readObject { reader, key in
                    guard key == "values" else { return try reader.skipValue() }
                    record.selfLabels = try list(&reader, "\(path()).labels.values") { try labels(&$0, path: "\(path()).labels.values[]", single: true)[0].val }
                }
            case nil: try reader.skipValue()
            }
        }
        if let type, type != "app.bsky.feed.post" { throw JSONReader.FieldError(reason: "\(path()) is a \(type), not a post") }
        return record
    }

    private static func facet(_ reader: inout JSONReader, path: @autoclosure () -> String) throws -> BlueskyFacet {
        try expectObject(&reader, path())
        var start: Int?, end: Int?, features: [BlueskyFacet.Feature] = []
        try reader.readObject { reader, key in
            switch key {
            case "index":
                try expectObject(&reader, "\(path()).index")
                try reader.readObject { reader, key in
                    switch key {
                    case "byteStart": start = try reader.optionalInt("\(path()).index.byteStart")
                    case "byteEnd": end = try reader.optionalInt("\(path()).index.byteEnd")
                    default: try reader.skipValue()
                    }
                }
            case "features":
                features = try list(&reader, "\(path()).features") { reader in
                    try expectObject(&reader, "\(path()).features[]")
                    var type: String?, value: String?
                    try reader.readObject { reader, key in
                        switch key {
                        case "$type": type = try reader.string("\(path()).features[].$type")
                        case "uri", "did", "tag": value = try reader.string("\(path()).features[].\(key)")
                        default: try reader.skipValue()
                        }
                    }
                    switch (type, value) {
                    case ("app.bsky.richtext.facet#link"?, let uri?): return .link(uri: uri)
                    case ("app.bsky.richtext.facet#mention"?, let did?): return .mention(did: did)
                    case ("app.bsky.richtext.facet#tag"?, let tag?): return .tag(tag)
                    default: return nil
                    }
                }.compactMap { $0 }
            default: try reader.skipValue()
            }
        }
        guard let start, let end else { throw JSONReader.FieldError(reason: "\(path()).index is missing byteStart or byteEnd") }
        return BlueskyFacet(byteStart: start, byteEnd: end, features: features)
    }

    /// Labels (`[label]`), or with `single`, one label object read as a list of one.
    private static func labels(_ reader: inout JSONReader, path: @autoclosure () -> String, single: Bool = false) throws -> [BlueskyLabel] {
        func one(_ reader: inout JSONReader) throws -> BlueskyLabel {
            try expectObject(&reader, path())
            var val: String?, neg = false
            try reader.readObject { reader, key in
                switch key {
                case "val": val = try reader.string("\(path()).val")
                case "neg": neg = try reader.readNull() ? false : try reader.bool("\(path()).neg")
                default: try reader.skipValue()
                }
            }
            guard let val else { throw JSONReader.FieldError(reason: "\(path()).val is missing") }
            return BlueskyLabel(val: val, neg: neg)
        }
        if single { return [try one(&reader)] }
        return try list(&reader, path(), one)
    }

    // MARK: Helpers

    static func expectObject(_ reader: inout JSONReader, _ path: @autoclosure () -> String) throws {
        guard try reader.peek() == UInt8(ascii: "{") else {
            let isNull = try reader.peek() == UInt8(ascii: "n")
            try reader.skipValue()
            throw JSONReader.FieldError(reason: isNull ? "\(path()) is null" : "\(path()) is not an object")
        }
    }

    /// An array (or `null`, read as empty) of at most ``maxListLength`` elements.
    static func list<T>(_ reader: inout JSONReader, _ path: @autoclosure () -> String, _ element: (inout JSONReader) throws -> T) throws -> [T] {
        if try reader.readNull() { return [] }
        guard try reader.peek() == UInt8(ascii: "[") else {
            try reader.skipValue()
            throw JSONReader.FieldError(reason: "\(path()) is not an array")
        }
        var values: [T] = []
        try reader.readArray { reader in
            guard values.count < maxListLength else { throw JSONReader.FieldError(reason: "\(path()) has more than \(maxListLength) elements") }
            values.append(try element(&reader))
        }
        return values
    }
}
