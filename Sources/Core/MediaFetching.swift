import Foundation

/// What one fetch may cost, and what it may send.
public struct MediaLimits: Sendable, Hashable {
    /// The most bytes one item may have (`maxItemBytes`).
    public var maxItemBytes: Int64
    /// The longest wait for the next byte, in seconds.
    public var idleTimeout: TimeInterval
    /// The longest one item may take in all, in seconds (a video's segments together).
    public var deadline: TimeInterval
    /// The most segments an HLS playlist may list.
    public var maxSegments: Int

    public init(maxItemBytes: Int64 = 500_000_000, idleTimeout: TimeInterval = 30, deadline: TimeInterval = 1800,
                maxSegments: Int = 20_000) {
        self.maxItemBytes = maxItemBytes
        self.idleTimeout = idleTimeout
        self.deadline = deadline
        self.maxSegments = maxSegments
    }
}

/// A feed's own server and its credentials: they go to that origin only (scheme, host and
/// port alike), never to a media host elsewhere, nor after a redirect away from it.
public struct MediaCredential: Sendable, Hashable {
    /// The feed's own server: its address, whose origin alone receives ``authorization``.
    public var server: URL
    /// The whole `Authorization` value: `Bearer <token>` or `Basic <base64>`.
    public var authorization: Secret

    /// Credentials sent as `authorization` (the whole field value).
    public init(server: URL, authorization: Secret) {
        self.server = server
        self.authorization = authorization
    }

    /// A bearer token (`Authorization: Bearer <token>`).
    public init(server: URL, token: Secret) {
        self.init(server: server, authorization: Secret(scheme: "Bearer", credentials: token))
    }
}

/// A feed whose credential is its account's login session (``SessionKeeper``): the archive sends
/// `Bearer <the stored session's access token>` to `server`'s origin only, as it does a
/// ``MediaCredential``. It never logs in itself: without a usable stored session (none yet, or
/// expired), the feed's media go without it until a sync renews the session.
public struct MediaSessionCredential: Sendable, Hashable {
    /// The feed's own server, whose origin alone receives the token.
    public var server: URL
    /// The account whose session holds the token (the same key the feed's sync saves it under).
    public var account: AccountKey

    public init(server: URL, account: AccountKey) {
        self.server = server
        self.account = account
    }
}

/// The archive's files: fetches an address into its content-addressed folder, removes a file.
///
/// Whatever the server sends, nothing is written outside the folder, and nothing partial is
/// left under a final name: bytes go to a temporary name that is renamed to the digest only when
/// complete and the length checks out.
public protocol MediaFetching: Sendable {
    /// Fetches `item`, resuming a partial download of the same address with `Range`.
    ///
    /// - Returns: the item with its outcome: `fetched` with digest, bytes and media type; or
    ///   `failed` / `refused` with the reason in one sentence. Never throws: a bad answer is an
    ///   outcome of the item, not of the run. Cancellation ends with `failed`.
    func fetch(_ item: MediaItem, limits: MediaLimits, credential: MediaCredential?) async -> MediaItem

    /// Removes the file of `digest`, if there is one.
    func removeFile(digest: String) throws

    /// Removes every temporary file (an interrupted download's bytes) older than `age` seconds.
    func removeStalePartials(olderThan age: TimeInterval) throws

    /// Releases connections.
    func close() async
}

/// How an integration keeps the media archive (``IntegrationDescriptor/media``).
public struct MediaArchiveCapability: Sendable {
    /// Makes the archive over `folder` (created when missing), logging to `log`.
    public var makeArchive: @Sendable (_ folder: URL, _ log: Logger) throws -> any MediaFetching

    public init(makeArchive: @escaping @Sendable (URL, Logger) throws -> any MediaFetching) { self.makeArchive = makeArchive }

    /// The keys of the config's `"media"` section, as the manual lists them (a feed's own
    /// section takes `kinds` and `maxItemBytes`).
    public static let keys = [
        ConfigKey("path", .path, .optional, default: "media", "the archive's folder, beside the config file when relative"),
        ConfigKey("maxBytes", .string, .optional, default: "no bound",
                  "the most the archive keeps (\"20GB\", \"500MB\"); when over, the oldest unstarred media of the largest feeds goes first"),
        ConfigKey("kinds", .list, .optional, default: #"["image", "video", "audio", "avatar"]"#, "what is fetched"),
        ConfigKey("maxItemBytes", .string, .optional, default: "500MB", "the largest one file may be; a larger one is refused"),
        ConfigKey("concurrency", .int(1...64), .optional, default: "4", "fetches at once, after syncing, in slots of their own"),
    ]
}
