import Core

/// One section of the config file that the app itself reads (not an integration's), with its
/// keys: the rows `feedsync man config` writes. `ConfigKeyTableTests` checks each table against
/// what ``Config`` accepts and refuses, so the manual cannot drift from the reader.
public struct ConfigKeyTable: Sendable {
    /// The section's key path as the manual writes it: `feeds[]`, `daemon`.
    public var path: String
    /// What the section is, in a sentence or two.
    public var doc: String
    public var keys: [ConfigKey]

    public init(path: String, doc: String, keys: [ConfigKey]) {
        self.path = path
        self.doc = doc
        self.keys = keys
    }
}

extension Config {
    /// The sections the app reads, in the manual's order. An integration's section (`store`,
    /// `posts`, `videos`) has the keys of that integration's descriptor.
    public static let keyTables: [ConfigKeyTable] = [
        ConfigKeyTable(path: "feeds[]", doc: """
            One feed. Besides these keys it holds a "posts" section (required: the integration that serves its posts, \
            and that integration's keys) and may hold a "videos" section (the video host that resolves its video ids).
            """, keys: [
                ConfigKey("name", .string, .required, "the feed's name: letters, digits, -, _ and ., not beginning with -; unique"),
                ConfigKey("interval", .duration(minimumInterval...maximumDuration), .optional, default: "5m", "how often feedsyncd syncs it"),
                ConfigKey("maxAttempts", .int(1...20), .optional, default: "6", "how many times a sync tries a call that fails transiently"),
                ConfigKey("maxDeletionRatio", .double(0...1), .optional, default: "0.5",
                          "the largest fraction of the feed a pull --full may delete as gone from the server"),
            ]),
        ConfigKeyTable(path: "feeds[] (opml)", doc: """
            An entry of feeds that holds "opml" instead of "name" stands for one web feed per outline of an OPML file, \
            read again on every load. Its "posts" section, if any, gives keys every such feed shares; "videos" as above.
            """, keys: [
                ConfigKey("opml", .path, .required, "the OPML file"),
                ConfigKey("name", .string, .optional, "a prefix for the feeds' names (NAME.title)"),
                ConfigKey("interval", .duration(minimumInterval...maximumDuration), .optional, default: "5m", "how often feedsyncd syncs each feed"),
                ConfigKey("maxAttempts", .int(1...20), .optional, default: "6", "how many times a sync tries a call that fails transiently"),
                ConfigKey("maxDeletionRatio", .double(0...1), .optional, default: "0.5",
                          "the largest fraction of a feed a pull --full may delete as gone from the server"),
            ]),
        ConfigKeyTable(path: "daemon", doc: "How feedsyncd (and a pull of several feeds) schedules; every key is optional.", keys: [
            ConfigKey("concurrency", .int(1...64), .optional, default: "4", "syncs run at once"),
            ConfigKey("maxRequestsPerHost", .int(1...64), .optional, default: "1", "requests in flight to one host at once, across all feeds"),
            ConfigKey("maxBackoff", .duration(1...maximumDuration), .optional, default: "1h", "the longest wait between retries of a failing feed"),
            ConfigKey("heartbeat", .duration(1...maximumDuration), .optional, default: "30s", "how often the daemon records in the store that it is alive"),
            ConfigKey("lockWait", .duration(0.1...86_400), .optional, default: "60s", "how long a daemon sync waits for another process's write lock"),
        ]),
        ConfigKeyTable(path: "metrics", doc: "Where feedsyncd serves /metrics and /healthz; without this section, nowhere.", keys: [
            ConfigKey("listen", .string, .required, "an IPv4 or IPv6 literal and a port: 127.0.0.1:9464 or [::1]:9464 (localhost means 127.0.0.1)"),
        ]),
        ConfigKeyTable(path: "media", doc: """
            The local media archive (docs/media.md): copies of the files the stored posts point at, fetched after syncing. \
            Off without this section. A feed's own "media" object may give "kinds" and "maxItemBytes" (and turns the archive on \
            for that feed alone when the config has no "media"); "media": false leaves a feed out.
            """, keys: MediaArchiveCapability.keys),
    ]
}
