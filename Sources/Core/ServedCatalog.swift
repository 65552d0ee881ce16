import Synchronization

/// What the reader listener serves: the feeds (with their groups) and the saved searches, as
/// the config says now. The daemon replaces them on a reload (SIGHUP), and every request reads
/// them afresh, so a feed added, a group changed or a search saved is served at once.
public final class ServedCatalog: Sendable {
    private let state: Mutex<(feeds: [ServedFeed], searches: [String: String])>

    public init(feeds: [ServedFeed] = [], searches: [String: String] = [:]) {
        state = Mutex((feeds, searches))
    }

    /// The served feeds and searches, as one snapshot.
    public var snapshot: (feeds: [ServedFeed], searches: [String: String]) { state.withLock { $0 } }

    /// Replaces what is served (a reload).
    public func update(feeds: [ServedFeed], searches: [String: String]) {
        state.withLock { $0 = (feeds, searches) }
    }
}
