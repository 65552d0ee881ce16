import Core
import Foundation

/// A `users` row: an author's profile, with the time of the newest post that carried it.
public struct UserColumns: Hashable, Sendable, Encodable {
    public var id: String
    public var handle: String
    public var displayName: String
    public var avatarURL: String?
    /// When the post that carried this profile was written, in milliseconds since 1970: a
    /// profile is only as fresh as its post.
    public var profileAt: Int64

    /// The columns, in the order ``write(to:)`` writes them, with the SQL type of each.
    public static let columns: [(name: String, kind: ColumnKind)] = [
        ("id", .text), ("handle", .text), ("display_name", .text), ("avatar_url", .text), ("profile_at", .integer),
    ]

    /// The column names, in ``columns`` order (and the JSON keys).
    public static let names = columns.map(\.name)

    private enum CodingKeys: String, CodingKey {
        case id, handle, displayName = "display_name", avatarURL = "avatar_url", profileAt = "profile_at"
    }

    public init(_ user: User, at date: Date) {
        id = user.id.rawValue
        handle = user.handle
        displayName = user.displayName
        avatarURL = user.avatar?.absoluteString
        profileAt = StoredTime.milliseconds(date)
    }

    /// Writes the values in ``names`` order.
    public func write<Writer: ColumnWriter>(to writer: inout Writer) {
        writer.text(id)
        writer.text(handle)
        writer.text(displayName)
        writer.text(avatarURL)
        writer.integer(profileAt)
    }

    /// The rows as a JSON array of objects keyed by column name, for a `jsonb` parameter
    /// (`jsonb_to_recordset`): keys sorted, absent values left out, as `JSONEncoder` wrote them
    /// from this type's `Encodable` form (which `StoreKitTests` keeps as the reference).
    public static func json(_ rows: [UserColumns], dialect: SQLDialect) -> String {
        var json = JSONWriter(escaping: dialect.jsonEscaping, reserving: rows.count * 120)
        json.openArray()
        for row in rows {
            json.openObject()
            json.string("avatar_url", row.avatarURL)
            json.string("display_name", row.displayName)
            json.string("handle", row.handle)
            json.string("id", row.id)
            json.int("profile_at", row.profileAt)
            json.closeObject()
        }
        json.closeArray()
        return json.text
    }

    /// The user a post row names as `id`, with the profile read beside it; a user without a
    /// stored profile shows their id as handle and name.
    public static func user(id: String, handle: String?, displayName: String?, avatarURL: String?) -> User {
        let shown = handle ?? id
        return User(id: UserID(id), handle: shown, displayName: displayName ?? shown, avatarURL: avatarURL.flatMap(URL.init(string:)))
    }
}
