import Foundation
import IntegrationKit

/// An account (`Account` entity): only the fields feedsync keeps.
struct MastodonAccount {
    var id: String
    var username: String?
    var acct: String
    var displayName: String?
    var avatar: String?
}

extension MastodonAccount {
    private enum Field: String, CaseIterable { case id, username, acct, displayName = "display_name", avatar }
    private static let fields = JSONKeys<Field>()

    /// Reads an account object; `path` names it in a skip reason (`account`, `reblog.account`).
    ///
    /// - Throws: `JSONReader.FieldError` for a missing or mistyped field, `SyntaxError` for bad JSON.
    init(reading reader: inout JSONReader, path: String) throws {
        try reader.expectObject(path)
        var id: String?, username: String?, acct: String?, displayName: String?, avatar: String?
        try reader.readObject(Self.fields) { reader, field in
            switch field {
            case .id?: id = try reader.requiredString("\(path).id")
            case .username?: username = try reader.stringOrNull("\(path).username")
            case .acct?: acct = try reader.requiredString("\(path).acct")
            case .displayName?: displayName = try reader.stringOrNull("\(path).display_name")
            case .avatar?: avatar = try reader.stringOrNull("\(path).avatar")
            case nil: try reader.skipValue()
            }
        }
        guard let id else { throw JSONReader.FieldError(reason: "\(path).id is missing") }
        guard let acct else { throw JSONReader.FieldError(reason: "\(path).acct is missing") }
        self.init(id: id, username: username, acct: acct, displayName: displayName, avatar: avatar)
    }

    /// Reads a body that is one account object (`GET /api/v1/accounts/lookup`).
    ///
    /// - Throws: `JSONReader.FieldError` for a missing or mistyped field, `SyntaxError` for bad JSON.
    init(body: Data) throws {
        self = try body.withUnsafeBytes { raw in
            var reader = JSONReader(raw.bindMemory(to: UInt8.self))
            let account = try MastodonAccount(reading: &reader, path: "account")
            guard reader.isAtEnd else { throw JSONReader.SyntaxError(offset: reader.offset, reason: "data follows the account") }
            return account
        }
    }
}

/// The accounts already read on a page, by their bytes: a page names the same few accounts many
/// times, and an account object is the largest part of a status that is read field by field.
struct MastodonAccountCache {
    private var seen: [(bytes: [UInt8], account: MastodonAccount)] = []

    /// Reads the account object that comes next, or recognises it as one read before.
    mutating func read(_ reader: inout JSONReader, path: String) throws -> MastodonAccount {
        try reader.expectObject(path)
        for entry in seen where reader.skip(ifNext: entry.bytes) { return entry.account }
        let start = reader.offset
        let account = try MastodonAccount(reading: &reader, path: path)
        // A page has 40 statuses; a hostile one must not make each lookup slower than a read.
        if seen.count < 64 { seen.append((reader.bytes(since: start), account)) }
        return account
    }
}
