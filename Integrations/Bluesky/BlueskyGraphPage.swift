import Core
import Foundation
import IntegrationKit

/// A page of `app.bsky.graph.getFollows` (`{"follows": [profileView], "cursor"}`) or
/// `app.bsky.graph.getList` (`{"items": [{"subject": profileView}], "cursor"}`), or one
/// `app.bsky.actor.getProfile` answer, read with IntegrationKit's forward-only ``JSONReader``.
///
/// A profile without a valid DID or a handle string is left out; only broken JSON, or a page
/// without its list, fails the page.
struct BlueskyGraphPage {
    var profiles: [BlueskyProfile] = []
    var cursor: String?

    /// The most profiles one page may list, far above the lexicons' 100.
    static let maxProfiles = 1_000

    /// - Parameter list: `follows` or `items` (whose elements wrap the profile in `subject`).
    /// - Throws: `JSONReader.SyntaxError` when the body is not JSON, `JSONReader.FieldError` when
    ///   it is not an object with the list.
    init(body: Data, list key: String) throws {
        var found = false
        var profiles: [BlueskyProfile] = [], cursor: String?
        try Self.read(body) { reader in
            try reader.readObject { reader, field in
                switch field {
                case key:
                    guard try reader.peek() == UInt8(ascii: "[") else { throw JSONReader.FieldError(reason: "\(key) is not an array") }
                    found = true
                    try reader.readArray { reader in
                        guard profiles.count < Self.maxProfiles else { throw JSONReader.FieldError(reason: "\(key) has more than \(Self.maxProfiles) profiles") }
                        if key == "items" {
                            var subject: BlueskyProfile?
                            try reader.readObjectOrSkip { reader, field in
                                if field == "subject" { subject = try Self.profile(&reader) } else { try reader.skipValue() }
                            }
                            if let subject { profiles.append(subject) }
                        } else if let profile = try Self.profile(&reader) {
                            profiles.append(profile)
                        }
                    }
                case "cursor":
                    cursor = try reader.stringOrSkip()
                default: try reader.skipValue()
                }
            }
        }
        guard found else { throw JSONReader.FieldError(reason: "the answer has no \(key) list") }
        self.profiles = profiles
        self.cursor = cursor.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// One profile view (`getProfile`'s answer); `nil` when it is not one.
    static func profile(body: Data) throws -> BlueskyProfile? {
        var profile: BlueskyProfile?
        try read(body) { profile = try Self.profile(&$0) }
        return profile
    }

    private static func read(_ body: Data, _ value: (inout JSONReader) throws -> Void) throws {
        try body.withUnsafeBytes { raw in
            var reader = JSONReader(raw.bindMemory(to: UInt8.self))
            guard try reader.peek() == UInt8(ascii: "{") else { throw JSONReader.FieldError(reason: "the answer is not an object") }
            try value(&reader)
            guard reader.isAtEnd else { throw JSONReader.SyntaxError(offset: reader.offset, reason: "data follows the answer") }
        }
    }

    /// A profile view's DID, handle, name and avatar; `nil` (the value skipped) when it is not a profile.
    private static func profile(_ reader: inout JSONReader) throws -> BlueskyProfile? {
        var did: String?, handle: String?, displayName: String?, avatar: String?
        try reader.readObjectOrSkip { reader, field in
            switch field {
            case "did": did = try reader.stringOrSkip()
            case "handle": handle = try reader.stringOrSkip()
            case "displayName": displayName = try reader.stringOrSkip()
            case "avatar": avatar = try reader.stringOrSkip()
            default: try reader.skipValue()
            }
        }
        guard let did, BlueskyIdentifier.isDID(did), let handle else { return nil }
        return BlueskyProfile(did: did, handle: handle, displayName: displayName, avatar: avatar)
    }
}
