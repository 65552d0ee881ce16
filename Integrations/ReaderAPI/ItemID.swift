import Core
import Foundation
import IntegrationKit

/// A post's item id in the Google Reader API: the first 63 bits of the SHA-256 of its feed's
/// name and its id (`feed + "\n" + id`), so it is the same across restarts, stores and backend
/// swaps, and needs no column. Written in the API's long form
/// (`tag:google.com,2005:reader/item/` and 16 hex digits) or its decimal short form.
struct ItemID: Hashable, Sendable {
    let value: UInt64

    init(feed: String, post: PostID) {
        let digest = PasswordHash.digest(ofToken: feed + "\n" + post.rawValue)
        value = (UInt64(digest.prefix(16), radix: 16) ?? 0) & 0x7FFF_FFFF_FFFF_FFFF
    }

    private init(_ value: UInt64) { self.value = value }

    static let longPrefix = "tag:google.com,2005:reader/item/"

    /// An id as a client sends it: the long form, 16 hex digits alone, or the decimal short
    /// form (Google's are signed; ours never negative). `nil` for anything else.
    init?(parsing text: String) {
        if text.hasPrefix(Self.longPrefix) {
            let hex = text.dropFirst(Self.longPrefix.count)
            guard hex.count == 16, let value = UInt64(hex, radix: 16), value <= UInt64(Int64.max) else { return nil }
            self.init(value)
        } else if text.count <= 20, text.allSatisfy(\.isASCII), let value = Int64(text), value >= 0 {
            self.init(UInt64(value))
        } else {
            return nil
        }
    }

    var long: String {
        let hex = String(value, radix: 16)
        return Self.longPrefix + String(repeating: "0", count: 16 - hex.count) + hex
    }

    var short: String { String(value) }
}
