import IntegrationKit

/// A status as the Mastodon client API sends it (`Status` entity): only the fields feedsync keeps.
struct MastodonStatus {
    var id: String
    var createdAt: String
    var inReplyToID: String?
    var spoilerText: String?
    var visibility: String?
    var language: String?
    var repliesCount: Int?
    var reblogsCount: Int?
    var favouritesCount: Int?
    var editedAt: String?
    var content: String?
    /// The status's page on the web (its permalink).
    var url: String?
    var reblog: Box<MastodonStatus>?
    var account: MastodonAccount
    var mediaAttachments: [MastodonMediaAttachment]?
}

/// Lets a struct hold an optional value of its own type (a reblog's original status).
final class Box<Value> {
    let value: Value
    init(_ value: Value) { self.value = value }
}

extension MastodonStatus {
    /// The fields read, by their keys on the wire.
    private enum Field: String, CaseIterable {
        case id, createdAt = "created_at", inReplyToID = "in_reply_to_id", spoilerText = "spoiler_text", visibility, language,
             repliesCount = "replies_count", reblogsCount = "reblogs_count", favouritesCount = "favourites_count",
             editedAt = "edited_at", content, url, reblog, account, mediaAttachments = "media_attachments"
    }
    private static let fields = JSONKeys<Field>()

    /// Reads a status object. `reblog` is true for the original inside a reblog: its fields are
    /// named `reblog.…` in a skip reason, and its own `reblog` (always `null` on Mastodon) is
    /// skipped unread, so that nesting cannot run deep.
    ///
    /// - Throws: `JSONReader.FieldError` for a missing or mistyped field, `SyntaxError` for bad JSON.
    init(reading reader: inout JSONReader) throws {
        var accounts = MastodonAccountCache()
        try self.init(reading: &reader, accounts: &accounts)
    }

    /// Reads a status object as ``init(reading:)`` does, recognising the accounts in `accounts`.
    init(reading reader: inout JSONReader, accounts: inout MastodonAccountCache, reblog inner: Bool = false) throws {
        // Literal paths, so that reading builds no strings; they are formatted only for a reason.
        let prefix = inner ? "reblog." : ""
        let accountPath = inner ? "reblog.account" : "account"
        let mediaPath = inner ? "reblog.media_attachments" : "media_attachments"
        guard try reader.peek() == UInt8(ascii: "{") else {
            throw JSONReader.FieldError(reason: inner ? "reblog has the wrong type" : "the status has the wrong type")
        }
        var id: String?, createdAt: String?, account: MastodonAccount?, replyTo: String?, spoiler: String?
        var visibility: String?, language: String?, replies: Int?, reblogs: Int?, favourites: Int?, editedAt: String?
        var content: String?, url: String?, reblog: Box<MastodonStatus>?, media: [MastodonMediaAttachment]?
        try reader.readObject(Self.fields) { reader, field in
            switch field {
            case .id?: id = try reader.requiredString("\(prefix)id")
            case .createdAt?: createdAt = try reader.requiredString("\(prefix)created_at")
            case .inReplyToID?: replyTo = try reader.stringOrNull("\(prefix)in_reply_to_id")
            case .spoilerText?: spoiler = try reader.stringOrNull("\(prefix)spoiler_text")
            case .visibility?: visibility = try reader.stringOrNull("\(prefix)visibility")
            case .language?: language = try reader.stringOrNull("\(prefix)language")
            case .repliesCount?: replies = try reader.wholeNumberOrNull("\(prefix)replies_count")
            case .reblogsCount?: reblogs = try reader.wholeNumberOrNull("\(prefix)reblogs_count")
            case .favouritesCount?: favourites = try reader.wholeNumberOrNull("\(prefix)favourites_count")
            case .editedAt?: editedAt = try reader.stringOrNull("\(prefix)edited_at")
            case .content?: content = try reader.stringOrNull("\(prefix)content")
            case .url?: url = try reader.stringOrNull("\(prefix)url")
            case .account?: account = try accounts.read(&reader, path: accountPath)
            case .reblog? where !inner:
                reblog = try reader.objectOrNull("reblog") ? Box(try MastodonStatus(reading: &reader, accounts: &accounts, reblog: true)) : nil
            case .mediaAttachments?:
                guard try reader.peek() != UInt8(ascii: "n") else { _ = try reader.readNull(); media = nil; return }
                guard try reader.peek() == UInt8(ascii: "[") else {
                    throw JSONReader.FieldError(reason: "\(mediaPath) has the wrong type")
                }
                var list: [MastodonMediaAttachment] = []
                try reader.readArray { reader in list.append(try MastodonMediaAttachment(reading: &reader, path: mediaPath)) }
                media = list
            case .reblog?, nil: try reader.skipValue()
            }
        }
        guard let id else { throw JSONReader.FieldError(reason: "\(prefix)id is missing") }
        guard let createdAt else { throw JSONReader.FieldError(reason: "\(prefix)created_at is missing") }
        guard let account else { throw JSONReader.FieldError(reason: "\(accountPath) is missing") }
        self.init(id: id, createdAt: createdAt, inReplyToID: replyTo, spoilerText: spoiler,
                  visibility: visibility, language: language, repliesCount: replies,
                  reblogsCount: reblogs, favouritesCount: favourites, editedAt: editedAt,
                  content: content, url: url, reblog: reblog, account: account, mediaAttachments: media)
    }

    /// The id of the status object that comes next, if it has one that is a string; the object
    /// is consumed. For the reason of a status that cannot be read.
    ///
    /// - Throws: `JSONReader.SyntaxError` for bad JSON.
    static func id(reading reader: inout JSONReader) throws -> String? {
        guard try reader.peek() == UInt8(ascii: "{") else {
            try reader.skipValue()
            return nil
        }
        var id: String?
        try reader.readObject { reader, key in
            if key == "id", try reader.peek() == UInt8(ascii: "\"") {
                id = try reader.string("id")
            } else {
                try reader.skipValue()
            }
        }
        return id
    }
}
