import Foundation
import IntegrationKit

/// One Jetstream message, as its README documents it, reduced to what a live feed uses.
///
///     {"did": "did:plc:…", "time_us": 1725911162329308, "kind": "commit",
///      "commit": {"rev": "…", "operation": "create", "collection": "app.bsky.feed.post", "rkey": "…", "record": {…}, "cid": "…"}}
struct JetstreamEvent: Equatable {
    enum Change: Equatable {
        /// A post was created or updated: hydrate it.
        case post(uri: String)
        /// A post was deleted.
        case postDeleted(uri: String)
        /// A repost was created: hydrate its subject, and store the repost as its own entry.
        case repost(uri: String, subject: String, at: String?)
        case repostDeleted(uri: String)
        /// The account's handle changed (`identity`), or its status (`account`).
        case identity(handle: String?)
        case account(active: Bool)
        /// Anything else (a heartbeat, another collection, an unknown kind).
        case other
    }

    var did: String
    var timeMicroseconds: Int64
    var change: Change

    /// - Returns: `nil` for a message that is not a Jetstream event (not JSON, no valid `did` or `time_us`).
    ///
    /// Read with IntegrationKit's forward-only ``JSONReader``, in whatever order the fields come;
    /// a field of the wrong type counts as absent.
    ///
    /// A `time_us` later than `now` is taken as `now`: a position in the future would be
    /// committed, resumed from (skipping every event until then) and, as a rename's time, would
    /// keep the author's profile from ever changing again.
    init?(_ text: String, now: Date = Date()) {
        var text = text
        guard let fields = text.withUTF8({ Fields.read($0) }) else { return nil }
        guard let did = fields.did, BlueskyIdentifier.isDID(did), let time = fields.time, time > 0 else { return nil }   // a heartbeat, or not an event
        self.did = did
        timeMicroseconds = min(Int64(time), Int64(now.timeIntervalSince1970 * 1_000_000))
        switch fields.kind {
        case "commit":
            guard let operation = fields.operation, let collection = fields.collection, let rkey = fields.rkey, Self.isRecordKey(rkey) else {
                change = .other
                return
            }
            let uri = "at://\(did)/\(collection)/\(rkey)"
            switch (collection, operation) {
            case ("app.bsky.feed.post", "create"), ("app.bsky.feed.post", "update"): change = .post(uri: uri)
            case ("app.bsky.feed.post", "delete"): change = .postDeleted(uri: uri)
            case ("app.bsky.feed.repost", "create"), ("app.bsky.feed.repost", "update"):
                guard let subject = fields.subject, BlueskyIdentifier.atURI(subject, collection: "app.bsky.feed.post") != nil else {
                    change = .other
                    return
                }
                change = .repost(uri: uri, subject: subject, at: fields.createdAt)
            case ("app.bsky.feed.repost", "delete"): change = .repostDeleted(uri: uri)
            default: change = .other
            }
        case "identity": change = .identity(handle: fields.handle)
        case "account": change = .account(active: fields.active ?? true)
        default: change = .other
        }
    }

    /// The fields of a message a live feed reads, each `nil` when absent or of another type.
    private struct Fields {
        var did: String?, time: Int?, kind: String?
        var operation: String?, collection: String?, rkey: String?, subject: String?, createdAt: String?
        var handle: String?, active: Bool?

        /// `nil` when the bytes are not one JSON object.
        static func read(_ bytes: UnsafeBufferPointer<UInt8>) -> Fields? {
            var reader = JSONReader(bytes)
            var fields = Fields()
            do {
                guard try reader.peek() == UInt8(ascii: "{") else { return nil }
                try reader.readObject { reader, key in
                    switch key {
                    case "did": fields.did = try reader.stringOrSkip()
                    case "time_us": fields.time = try reader.lenient { try $0.optionalWholeNumber("time_us") }
                    case "kind": fields.kind = try reader.stringOrSkip()
                    case "commit":
                        try reader.readObjectOrSkip { reader, key in
                            switch key {
                            case "operation": fields.operation = try reader.stringOrSkip()
                            case "collection": fields.collection = try reader.stringOrSkip()
                            case "rkey": fields.rkey = try reader.stringOrSkip()
                            case "record":
                                try reader.readObjectOrSkip { reader, key in
                                    switch key {
                                    case "subject": try reader.readObjectOrSkip { reader, key in
                                        if key == "uri" { fields.subject = try reader.stringOrSkip() } else { try reader.skipValue() }
                                    }
                                    case "createdAt": fields.createdAt = try reader.stringOrSkip()
                                    default: try reader.skipValue()
                                    }
                                }
                            default: try reader.skipValue()
                            }
                        }
                    case "identity": try reader.readObjectOrSkip { reader, key in
                        if key == "handle" { fields.handle = try reader.stringOrSkip() } else { try reader.skipValue() }
                    }
                    case "account": try reader.readObjectOrSkip { reader, key in
                        if key == "active" { fields.active = try reader.lenient { try $0.bool("account.active") } } else { try reader.skipValue() }
                    }
                    default: try reader.skipValue()
                    }
                }
                guard reader.isAtEnd else { return nil }
            } catch {
                return nil   // not JSON, or nested past the reader's depth
            }
            return fields
        }
    }

    /// A record key as the AT Protocol allows it: 1–512 of `[A-Za-z0-9._:~-]`, not `.` or `..`.
    static func isRecordKey(_ text: String) -> Bool {
        let bytes = text.utf8
        guard (1...512).contains(bytes.count), text != ".", text != ".." else { return false }
        return bytes.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || "._:~-".utf8.contains($0) }
    }
}
