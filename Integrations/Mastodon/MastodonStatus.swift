import IntegrationKit

/// A status as the Mastodon client API sends it (`Status` entity): only the fields feedsync keeps.
struct MastodonStatus {
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
    /// The status's page on the web (its permalink).
    var url: String?
    var reblog: Box<MastodonStatus>?
    var account: MastodonAccount
    var media_attachments: [MastodonMediaAttachment]?
}

/// Lets a struct hold an optional value of its own type (a reblog's original status).
final class Box<Value> {
    let value: Value
    init(_ value: Value) { self.value = value }
}

extension MastodonStatus {
    private enum Field: String, CaseIterable {
        case id, created_at, in_reply_to_id, spoiler_text, visibility, language, replies_count, reblogs_count,
             favourites_count, edited_at, content, url, reblog, account, media_attachments
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
            case .created_at?: createdAt = try reader.requiredString("\(prefix)created_at")
            case .in_reply_to_id?: replyTo = try reader.stringOrNull("\(prefix)in_reply_to_id")
            case .spoiler_text?: spoiler = try reader.stringOrNull("\(prefix)spoiler_text")
            case .visibility?: visibility = try reader.stringOrNull("\(prefix)visibility")
            case .language?: language = try reader.stringOrNull("\(prefix)language")
            case .replies_count?: replies = try reader.wholeNumberOrNull("\(prefix)replies_count")
            case .reblogs_count?: reblogs = try reader.wholeNumberOrNull("\(prefix)reblogs_count")
            case .favourites_count?: favourites = try reader.wholeNumberOrNull("\(prefix)favourites_count")
            case .edited_at?: editedAt = try reader.stringOrNull("\(prefix)edited_at")
            case .content?: content = try reader.stringOrNull("\(prefix)content")
            case .url?: url = try reader.stringOrNull("\(prefix)url")
            case .account?: account = try accounts.read(&reader, path: accountPath)
            case .reblog? where !inner:
                reblog = try reader.objectOrNull("reblog") ? Box(try MastodonStatus(reading: &reader, accounts: &accounts, reblog: true)) : nil
            case .media_attachments?:
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
        self.init(id: id, created_at: createdAt, in_reply_to_id: replyTo, spoiler_text: spoiler,
                  visibility: visibility, language: language, replies_count: replies,
                  reblogs_count: reblogs, favourites_count: favourites, edited_at: editedAt,
                  content: content, url: url, reblog: reblog, account: account, media_attachments: media)
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
