/// How to build a feed's backend again for each sync, for a backend that keeps nothing between
/// syncs (its state is the feed's cursor in the store): a daemon with 100,000 feeds then holds
/// this recipe, a few small values a feed, instead of each feed's objects (issue 40).
///
/// The daemon builds the backend once at load, so a bad section is still a config error, and
/// then keeps only the recipe; a sync builds the backend, runs, and drops it.
///
///     FeedRebuild(sharedKey: "curl transport \(limits)", shared: TransportManager(transport)) { context in
///         FeedBackend(posts: ExamplePostService(url: url, transport: transport, requests: context.requests), …)
///     }
public struct FeedRebuild: Sendable {
    /// Builds the backend for one sync, from the values it was first built from.
    public var make: @Sendable (IntegrationContext) -> FeedBackend
    /// Names what every feed rebuilt alike shares (a transport): feeds with one key share one
    /// ``shared`` lifecycle.
    public var sharedKey: String
    /// What is set up once and torn down once for all the feeds with ``sharedKey``, in place
    /// of each feed's own lifecycle (which a rebuilt backend's setup and teardown leave alone).
    public var shared: any IntegrationLifecycle

    public init(sharedKey: String, shared: any IntegrationLifecycle, make: @escaping @Sendable (IntegrationContext) -> FeedBackend) {
        self.make = make
        self.sharedKey = sharedKey
        self.shared = shared
    }
}
