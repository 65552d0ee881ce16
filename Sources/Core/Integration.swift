import Foundation

/// Setup and teardown of one integration, driven in order by the app's IntegrationsManager.
///
/// `setUp` is where an integration touches the world (opens a database, loads a catalog);
/// building it from config does not, so a bad config changes nothing on disk.
public protocol IntegrationLifecycle: Sendable {
    /// What this is, for messages: `"sqlite store /var/lib/feedsync/feeds.sqlite"`.
    var name: String { get }
    /// Prepares the integration for use.
    /// - Throws: ``ServiceError`` or ``ConfigError`` naming what could not be prepared.
    func setUp() async throws
    /// Releases what `setUp` acquired. Called once, in reverse order of setup, even after errors.
    func tearDown() async
}

/// A service together with the lifecycle of the integration that provides it.
public struct Managed<Service: Sendable>: Sendable {
    public var service: Service
    public var lifecycle: any IntegrationLifecycle

    public init(_ service: Service, lifecycle: any IntegrationLifecycle) {
        self.service = service
        self.lifecycle = lifecycle
    }
}

/// The services a posts backend provides for one feed.
public struct FeedBackend: Sendable {
    public var posts: any PostService
    /// How the backend logs in; `nil` for one that needs no login (a public web feed).
    public var authentication: (any AuthenticationService)?
    /// The backend's own video host, for backends that have one.
    public var videos: (any VideoService)?
    /// Where the backend pushes the feed's changes as they happen, when the feed asks for it
    /// (`"stream": true`) and the backend can; `nil` for a feed that is only polled.
    public var live: (any LiveSource)?
    public var lifecycle: any IntegrationLifecycle
    /// Which backend this is: the integration and the settings that change what it serves
    /// (server or fixture, account, timeline), never a secret. A feed's cursor, validator
    /// and session belong to one identity; when it changes, none of them is reused.
    public var identity: String
    /// The account the backend logs in as; `nil` for one without a login. Every feed of one
    /// account shares its session (one login, one refresh), whatever else their identities say.
    public var account: AccountKey?
    /// How to build this backend again for each sync, when it keeps nothing between syncs and
    /// needs no setup of its own; `nil`: it is built once and kept.
    public var rebuild: FeedRebuild?

    public init(posts: any PostService, authentication: (any AuthenticationService)?,
                videos: (any VideoService)? = nil, live: (any LiveSource)? = nil, lifecycle: any IntegrationLifecycle, identity: String,
                account: AccountKey? = nil, rebuild: FeedRebuild? = nil) {
        self.rebuild = rebuild
        self.posts = posts
        self.live = live
        self.authentication = authentication
        self.videos = videos
        self.lifecycle = lifecycle
        self.identity = identity
        self.account = account
    }
}

/// What the app hands every integration it builds for a feed.
public struct IntegrationContext: Sendable {
    /// Counts the feed's requests; add one per request put on the wire.
    public var requests: RequestCounter
    /// Shared by every feed of the process: take a permit per request to a network host.
    public var hosts: HostGate
    /// Where the integration logs: waits an operator should see (a spent rate limit, say) as
    /// ``Logger/notice(_:)``, retries and other detail at `debug`.
    public var log: Logger
    /// How this feed waits (a quota, a `Retry-After`): with its sync slot and host permit handed back.
    public var waiter: Waiter
    /// Shared by every feed the process builds together: objects feeds may share (a transport).
    public var shared: SharedResources
    /// What requests call the client: `feedsync/0.1.0`.
    public var userAgent: String
    /// How often the feed is polled, for work an integration repeats on the feed's rhythm (a
    /// live source reading its follow set again); `nil` where no feed is being built.
    public var interval: TimeInterval?

    public init(requests: RequestCounter = RequestCounter(), hosts: HostGate = HostGate(),
                log: Logger = .disabled, shared: SharedResources = SharedResources(),
                userAgent: String = "feedsync", waiter: Waiter = .plain) {
        self.waiter = waiter
        self.shared = shared
        self.userAgent = userAgent
        self.requests = requests
        self.hosts = hosts
        self.log = log
    }
}
