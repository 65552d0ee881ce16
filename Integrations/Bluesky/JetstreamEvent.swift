import Foundation

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
    init?(_ text: String) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else { return nil }
        guard let did = object["did"] as? String, BlueskyIdentifier.isDID(did),
              let time = (object["time_us"] as? NSNumber)?.int64Value, time > 0 else { return nil }   // a heartbeat, or not an event
        self.did = did
        timeMicroseconds = time
        switch object["kind"] as? String {
        case "commit":
            guard let commit = object["commit"] as? [String: Any], let operation = commit["operation"] as? String,
                  let collection = commit["collection"] as? String, let rkey = commit["rkey"] as? String, Self.isRecordKey(rkey) else {
                change = .other
                return
            }
            let uri = "at://\(did)/\(collection)/\(rkey)"
            switch (collection, operation) {
            case ("app.bsky.feed.post", "create"), ("app.bsky.feed.post", "update"): change = .post(uri: uri)
            case ("app.bsky.feed.post", "delete"): change = .postDeleted(uri: uri)
            case ("app.bsky.feed.repost", "create"), ("app.bsky.feed.repost", "update"):
                let record = commit["record"] as? [String: Any]
                guard let subject = (record?["subject"] as? [String: Any])?["uri"] as? String,
                      BlueskyIdentifier.atURI(subject, collection: "app.bsky.feed.post") != nil else {
                    change = .other
                    return
                }
                change = .repost(uri: uri, subject: subject, at: record?["createdAt"] as? String)
            case ("app.bsky.feed.repost", "delete"): change = .repostDeleted(uri: uri)
            default: change = .other
            }
        case "identity":
            change = .identity(handle: (object["identity"] as? [String: Any])?["handle"] as? String)
        case "account":
            change = .account(active: (object["account"] as? [String: Any])?["active"] as? Bool ?? true)
        default:
            change = .other
        }
    }

    /// A record key as the AT Protocol allows it: 1–512 of `[A-Za-z0-9._:~-]`, not `.` or `..`.
    static func isRecordKey(_ text: String) -> Bool {
        let bytes = text.utf8
        guard (1...512).contains(bytes.count), text != ".", text != ".." else { return false }
        return bytes.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || "._:~-".utf8.contains($0) }
    }
}
