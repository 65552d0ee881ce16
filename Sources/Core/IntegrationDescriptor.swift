import Foundation

/// One integration as the app's registry lists it: its config name, its section's keys, what
/// it builds from config, and what it adds to the commands (a sign-in flow, forms of `add`).
///
/// Each integration declares one, in its own folder, and the registry lists them one a line;
/// nothing else of the app names an integration. What an integration can do is a field that
/// is `nil` (or empty) when it cannot: a posts backend sets ``posts``, a store ``store``.
///
///     public static let descriptor = IntegrationDescriptor(
///         name: "example", summary: "a timeline of the example network",
///         example: #"{"integration": "example", "server": "https://example.net", "tokenEnv": "EXAMPLE_TOKEN"}"#,
///         keys: [ConfigKey("server", .url, .required, "the server")] + ConfigKey.secret("token", "the access token"),
///         posts: PostsCapability(makeBackend: ExampleIntegration.makeBackend),
///         signIn: ExampleSignIn(), addForms: [ExampleHandleForm()])
public struct IntegrationDescriptor: Sendable {
    /// What a config's `"integration"` key says to choose it, in lower case: `"example"`.
    public var name: String
    /// What it is, in a few words, for help and the manual: `a Mastodon-compatible timeline`.
    public var summary: String
    /// Its config section as the manual shows it, one JSON object.
    public var example: String
    /// Every key its section may hold besides `"integration"`, in the order the manual lists them.
    /// Building refuses any other key (``ConfigSection/finish(alsoKnown:)``).
    public var keys: [ConfigKey]
    /// How it serves a feed's posts (a feed's `"posts"` section names it), if it does.
    public var posts: PostsCapability?
    /// How it resolves a feed's videos (a feed's `"videos"` section names it), if it does.
    public var videos: VideosCapability?
    /// How it stores the mirror (the config's `"store"` section names it), if it does.
    public var store: StoreCapability?
    /// What `feedsync login NAME` and `logout` run, for a backend one signs in to.
    public var signIn: (any SignInFlow)?
    /// The forms of `feedsync add WHAT` it recognises, each turning WHAT into feeds to add.
    public var addForms: [any AddForm]
    /// How it reads a list of subscriptions (an `"opml"` entry of the config), if it does.
    public var subscriptions: SubscriptionListCapability?
    /// How it serves the mirror to clients (the reader listener), if it does.
    public var serving: ServingCapability?
    /// How it sends webhook deliveries, if it does (an integration that faces out).
    public var webhooks: WebhooksCapability?
    /// How it keeps the media archive (the config's `"media"` section), if it does.
    public var media: MediaArchiveCapability?

    public init(name: String, summary: String, example: String, keys: [ConfigKey],
                posts: PostsCapability? = nil, videos: VideosCapability? = nil, store: StoreCapability? = nil,
                signIn: (any SignInFlow)? = nil, addForms: [any AddForm] = [], subscriptions: SubscriptionListCapability? = nil,
                serving: ServingCapability? = nil, webhooks: WebhooksCapability? = nil,
                media: MediaArchiveCapability? = nil) {
        self.webhooks = webhooks
        self.media = media
        self.name = name
        self.summary = summary
        self.example = example
        self.keys = keys
        self.posts = posts
        self.videos = videos
        self.store = store
        self.signIn = signIn
        self.addForms = addForms
        self.subscriptions = subscriptions
        self.serving = serving
    }
}

/// How a posts backend is built for one feed.
public struct PostsCapability: Sendable {
    /// Builds the backend from its config section without touching the network.
    /// - Throws: ``ConfigError`` naming the bad key.
    public var makeBackend: @Sendable (ConfigSection, IntegrationContext) throws -> FeedBackend
    /// The key naming where the feed is polled (a web feed's `url`), whose value the store may
    /// remember moving (a discovery, a permanent redirect); `nil` for a backend without one.
    public var locationKey: String?
    /// The feed's own server and the credentials the media archive may send it, read from the
    /// same section without touching the network; `nil` (or a `nil` answer) for a feed without
    /// any. The archive sends them only to that server's origin (``MediaCredential``).
    public var mediaCredential: (@Sendable (ConfigSection) throws -> MediaCredential?)?
    /// For a feed whose token comes from a login (a custom API's access token): the server and
    /// the account whose stored session the media archive sends, read from the section without
    /// touching the network; `nil` (or a `nil` answer) for a feed without a login.
    public var mediaSession: (@Sendable (ConfigSection) throws -> MediaSessionCredential?)?

    public init(makeBackend: @escaping @Sendable (ConfigSection, IntegrationContext) throws -> FeedBackend, locationKey: String? = nil,
                mediaCredential: (@Sendable (ConfigSection) throws -> MediaCredential?)? = nil,
                mediaSession: (@Sendable (ConfigSection) throws -> MediaSessionCredential?)? = nil) {
        self.makeBackend = makeBackend
        self.locationKey = locationKey
        self.mediaCredential = mediaCredential
        self.mediaSession = mediaSession
    }
}

/// How a video host is built for one feed.
public struct VideosCapability: Sendable {
    /// Builds the video service from its config section without side effects.
    public var makeService: @Sendable (ConfigSection, IntegrationContext) throws -> Managed<any VideoService>

    public init(makeService: @escaping @Sendable (ConfigSection, IntegrationContext) throws -> Managed<any VideoService>) {
        self.makeService = makeService
    }
}

/// How a store is built, and what it is beyond the roles every store plays.
public struct StoreCapability: Sendable {
    /// Builds the store from its config section; nothing is opened until setup.
    ///
    /// - Parameters:
    ///   - createIfMissing: whether setup may create the store. When `false` (commands that only
    ///     read it), setup of a missing store fails with ``ServiceError`` `.notFound`.
    ///   - log: where the store logs: slow work an operator should see (an upgrade) as a notice.
    public var makeStore: @Sendable (_ config: ConfigSection, _ createIfMissing: Bool, _ log: Logger) throws -> Managed<any FeedStore>
    public var traits: StoreTraits
    /// The keys a config written from nothing (`feedsync add` or `login` without a config)
    /// gives this store, when it is the registry's default: `[("path", "feedsync.sqlite")]`.
    public var newConfigFields: [(key: String, value: String)]

    public init(makeStore: @escaping @Sendable (ConfigSection, Bool, Logger) throws -> Managed<any FeedStore>, traits: StoreTraits,
                newConfigFields: [(key: String, value: String)] = []) {
        self.makeStore = makeStore
        self.traits = traits
        self.newConfigFields = newConfigFields
    }
}

/// What the app must know of a store that its roles do not say.
///
/// What a built store can do is said by the roles its lifecycle plays: ``LocalStoreFiles`` for
/// one kept in local files (its database and side files, which no output may replace), and
/// ``ReadOnlyStoreSetup`` for one that `config check` may open to look at without changing it.
public struct StoreTraits: Sendable, Equatable {
    /// How the daemons that serve one store share it.
    public enum Coordination: Sendable, Equatable {
        /// One daemon serves it (a lock on a local file); a second is refused.
        case oneDaemon
        /// Several daemons serve it at once, each sync under a lease on its feed that lapses
        /// unless renewed; the daemon's metrics show the leases held.
        case leases
    }

    public var coordination: Coordination
    /// Whether it lives in local files beside the config, so a login's new secret file goes
    /// beside it; for a server, the secret goes beside the config.
    public var keepsLocalFiles: Bool

    public init(coordination: Coordination, keepsLocalFiles: Bool) {
        self.coordination = coordination
        self.keepsLocalFiles = keepsLocalFiles
    }
}

/// A store's lifecycle that keeps the store in local files: the database and the side files
/// beside it (a journal, a lock, a sessions file), which `export --output` must never replace.
public protocol LocalStoreFiles: IntegrationLifecycle {
    /// The database file's path; `nil` for a store held in memory.
    var databaseFile: String? { get }
    /// Whether a file of the database's folder named `name` is the database or one of its side files.
    func isStoreFile(named name: String) -> Bool
}

/// How an integration reads a list of subscriptions (an OPML file) into feeds of its own.
public struct SubscriptionListCapability: Sendable {
    /// What the list is, for messages: `an OPML file`.
    public var kind: String
    /// The subscriptions the list's bytes hold, in order.
    /// - Throws: ``SubscriptionListError`` saying in a sentence why the bytes are not a list.
    public var read: @Sendable (_ data: Data) throws -> [Subscription]
    /// The keys of the `posts` section that make a feed of one subscription: `["url": …]`.
    public var fields: @Sendable (Subscription) -> [String: ConfigValue]

    public init(kind: String, read: @escaping @Sendable (Data) throws -> [Subscription],
                fields: @escaping @Sendable (Subscription) -> [String: ConfigValue]) {
        self.kind = kind
        self.read = read
        self.fields = fields
    }
}

/// One entry of a list of subscriptions.
public struct Subscription: Sendable, Equatable {
    /// The title the list gives it, if any.
    public var title: String?
    /// The feed's address, or for a site the page whose feed is discovered.
    public var url: URL
    /// Whether ``url`` is a site's page rather than a feed.
    public var isSite: Bool

    public init(title: String?, url: URL, isSite: Bool) {
        self.title = title
        self.url = url
        self.isSite = isSite
    }
}

/// Why bytes are not a list of subscriptions, in one sentence.
public struct SubscriptionListError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}
