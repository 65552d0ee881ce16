import Core
import Foundation
import Sync

extension Config {
    /// The media archive (`"media"`, globally or per feed): off unless a section turns it on.
    public struct Media: Sendable {
        /// The archive's folder, resolved against the config file's folder.
        public var folder: URL
        /// The most bytes the archive keeps; `nil`: no bound.
        public var maxBytes: Int64?
        /// Fetches at once, in slots of their own after syncing.
        public var concurrency: Int
        /// Each archived feed's kinds and limits, by name.
        public var feeds: [String: MediaArchiver.FeedSettings]
    }

    /// The kinds a `"media"` section archives when it names none.
    static let defaultMediaKinds: [MediaKind] = [.image, .video, .audio, .avatar]
    /// `maxItemBytes` when a section gives none: 500 MB.
    static let defaultMaxItemBytes: Int64 = 500_000_000
    /// The largest size any key accepts: 1 PB.
    static let maxMediaSize: Int64 = 1_000_000_000_000_000


    /// Reads the config's `"media"` and each feed's, into the archive's settings; `nil` when no
    /// section turns it on. A feed's `"media": false` leaves that feed out.
    static func media(in root: ConfigSection, feeds list: [Feed]) throws -> Media? {
        let global = try root.section("media")
        var feeds: [String: MediaArchiver.FeedSettings] = [:]
        let defaults = try global.map { try feedSettings($0, base: nil) }
        for feed in list {
            let name = feed.name
            if feed.media == .off { continue }
            if case .own(let own) = feed.media {
                feeds[name] = try feedSettings(own, base: defaults)
                try own.finish()
            } else if let defaults {
                feeds[name] = defaults
            }
        }
        guard global != nil || !feeds.isEmpty else { return nil }
        var media = Media(folder: root.context.resolve(path: "media"), maxBytes: nil, concurrency: 4, feeds: feeds)
        if let global {
            media.folder = try global.path("path") ?? media.folder
            media.maxBytes = try size(global, "maxBytes")
            media.concurrency = try global.int("concurrency", in: 1...64) ?? 4
            try global.finish()
        }
        return media
    }

    /// What a feed's `"media"` says: nothing (the config's section decides), `false`, or its own section.
    public enum FeedMedia: Equatable {
        case inherited, off, own(ConfigSection)

        public static func == (lhs: FeedMedia, rhs: FeedMedia) -> Bool {
            switch (lhs, rhs) {
            case (.inherited, .inherited), (.off, .off): true
            case (.own(let a), .own(let b)): a.path == b.path
            default: false
            }
        }
    }

    /// Reads a feed's `"media"` key: `false`, an object, or absent.
    static func feedMedia(_ section: ConfigSection) throws -> FeedMedia {
        guard section.has("media") else { return .inherited }
        if let off = try? section.bool("media") {
            guard !off else { throw section.error("media", "is an object of media keys, or false to leave the feed out of the archive") }
            return .off
        }
        return try section.section("media").map { .own($0) } ?? .inherited
    }

    /// `kinds` and `maxItemBytes` of a section, over `base`'s.
    private static func feedSettings(_ section: ConfigSection, base: MediaArchiver.FeedSettings?) throws -> MediaArchiver.FeedSettings {
        var settings = base ?? MediaArchiver.FeedSettings(kinds: Set(defaultMediaKinds), limits: MediaLimits(maxItemBytes: defaultMaxItemBytes))
        if let kinds = try section.stringList("kinds") {
            settings.kinds = Set(try kinds.map { name in
                guard let kind = MediaKind(rawValue: name) else {
                    throw section.error("kinds", "\"\(Terminal.safe(name, limit: 40))\" is not a kind; the kinds are "
                                        + defaultMediaKinds.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))
                }
                return kind
            })
        }
        if let bytes = try size(section, "maxItemBytes") { settings.limits.maxItemBytes = bytes }
        return settings
    }

    /// A size such as `"20GB"`, `"500MB"`, `"100KB"`, `"2GiB"` or a number of bytes, 1 B to 1 PB.
    static func size(_ section: ConfigSection, _ key: String) throws -> Int64? {
        guard section.has(key) else { return nil }
        let text: String
        if let number = try? section.int(key, in: 1...Int(maxMediaSize)) {
            text = "\(number)"
        } else {
            text = try section.string(key) ?? ""
        }
        guard let bytes = parseSize(text), (1...maxMediaSize).contains(bytes) else {
            throw section.error(key, "expected a size from 1 B to 1 PB such as \"20GB\", \"500MB\" or \"2GiB\", found \"\(Terminal.safe(text, limit: 40))\"")
        }
        return bytes
    }

    /// Bytes of `"20GB"` (units B, KB, MB, GB, TB, PB by 1000; KiB, MiB, GiB, TiB by 1024).
    static func parseSize(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        let unit = trimmed.dropFirst(digits.count).trimmingCharacters(in: .whitespaces).lowercased()
        let units: [String: Double] = ["": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "pb": 1e15,
                                       "kib": 1024, "mib": 1_048_576, "gib": 1_073_741_824, "tib": 1_099_511_627_776]
        guard !digits.isEmpty, let number = Double(digits), let factor = units[unit] else { return nil }
        let bytes = (number * factor).rounded()
        guard bytes.isFinite, bytes >= 1, bytes <= 1e15 else { return nil }
        return Int64(bytes)
    }
}
