@testable import App
import Core
import Foundation
import SQLiteCache
import Synchronization
import Testing

/// A daemon keeps a recipe, not a backend, for each feed whose backend keeps nothing between
/// syncs (issue 40): counted with a backend of the test's own whose objects count themselves.
@Suite struct BackendsPerSyncTests {
    /// How many of the test backend's post services exist now, and were ever made.
    final class Census: Sendable {
        private let counts = Mutex<(live: Int, made: Int, duringPages: [Int])>((0, 0, []))
        var live: Int { counts.withLock { $0.live } }
        var made: Int { counts.withLock { $0.made } }
        /// ``live`` as each page was fetched.
        var duringPages: [Int] { counts.withLock { $0.duringPages } }
        func born() { counts.withLock { $0.live += 1; $0.made += 1 } }
        func died() { counts.withLock { $0.live -= 1 } }
        func paged() { counts.withLock { $0.duringPages.append($0.live) } }
    }

    /// One empty page; counts itself while it exists.
    final class CountedPosts: PostService {
        let census: Census
        init(_ census: Census) {
            self.census = census
            census.born()
        }
        deinit { census.died() }

        func page(after cursor: FeedCursor?, session: Session?) async throws -> FeedPage {
            census.paged()
            return FeedPage(changes: [], nextCursor: FeedCursor(position: "end"), hasMore: false, missingMeansDeleted: false)
        }
    }

    struct Lifecycle: IntegrationLifecycle {
        let name: String
        func setUp() async throws {}
        func tearDown() async {}
    }

    let folder: URL
    let census = Census()

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-per-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    /// A registry of the SQLite store and `counted`, whose backend offers a recipe unless its
    /// section says `"kept": true`.
    var registry: IntegrationRegistry {
        let census = census
        let make: @Sendable (IntegrationContext) -> FeedBackend = { _ in
            FeedBackend(posts: CountedPosts(census), authentication: nil, lifecycle: Lifecycle(name: "counted feed"), identity: "counted")
        }
        let counted = IntegrationDescriptor(
            name: "counted", summary: "a backend that counts its objects", example: #"{"integration": "counted"}"#,
            keys: [ConfigKey("kept", .bool, "whether it offers no recipe")],
            posts: PostsCapability(makeBackend: { section, context in
                var backend = make(context)
                if try section.bool("kept") != true {
                    backend.rebuild = FeedRebuild(sharedKey: "counted", shared: Lifecycle(name: "counted shared"), make: make)
                }
                return backend
            }))
        return IntegrationRegistry([SQLiteCacheIntegration.descriptor, counted])
    }

    func load(feeds: Int, kept: Int = 0, perSync: Bool) throws -> Runtime {
        let entries = (0..<feeds).map { #"{"name": "f\#($0)", "posts": {"integration": "counted", "kept": \#($0 < kept)}}"# }
        let url = folder.appendingPathComponent("feedsync.json")
        try Data(#"{"feeds": [\#(entries.joined(separator: ","))]}"#.utf8).write(to: url)
        var options = Runtime.Options()
        options.registry = registry
        options.backendsPerSync = perSync
        return try Runtime.load(configPath: url.path, environment: [:], options)
    }

    @Test func aFeedBuiltPerSyncHoldsNoBackendBeforeOrAfterItsSync() async throws {
        let runtime = try load(feeds: 20, kept: 2, perSync: true)
        // Each feed's backend was built once, to check its section, and only the two without a recipe kept it.
        #expect(census.made == 20)
        #expect(census.live == 2)
        #expect(runtime.provider.lifecycles.map(\.name).dropFirst() == ["counted feed", "counted feed", "counted shared"])
        try await runtime.start()
        for name in runtime.builtFeedNames { _ = try await runtime.engine(forFeed: name).run() }
        await runtime.stop()
        // A sync of a feed built per sync had its own backend, one more than the kept two, and dropped it.
        #expect(census.duringPages == [2, 2] + Array(repeating: 3, count: 18))
        #expect(census.made == 38)
        #expect(census.live == 2)
    }

    @Test func withoutTheOptionEveryBackendIsBuiltOnceAndKept() async throws {
        let runtime = try load(feeds: 5, perSync: false)
        #expect(census.live == 5)
        #expect(runtime.provider.lifecycles.count == 6)
        try await runtime.start()
        for name in runtime.builtFeedNames { _ = try await runtime.engine(forFeed: name).run() }
        await runtime.stop()
        #expect(census.made == 5)
        #expect(census.duringPages == Array(repeating: 5, count: 5))
    }
}
