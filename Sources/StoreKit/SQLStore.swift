import Core
import Foundation

/// A store that runs ``StoreSQL``'s statements on a connection of its own: what both stores
/// answer the same way (a feed's cursor, backend and stream position, the feeds, the daemons,
/// live states, the videos left to resolve) is answered once, here.
///
/// A store provides the two ways to reach its connection and its ``StoreSQL``; what it does
/// differently (its transactions, its fences, its page writes) it writes itself.
public protocol SQLStore: Actor {
    /// The shared statements in this store's dialect.
    static var sql: StoreSQL { get }

    /// Runs `query` on the open connection.
    ///
    /// - Throws: ``Core/ServiceError`` `.storage` naming `operation` and the reason.
    func query<Row>(_ operation: @autoclosure () -> String, _ query: StoreQuery<Row>) throws -> [Row]

    /// Runs `statement` on the open connection, on its own.
    ///
    /// - Returns: how many rows it returned (a count of what it wrote, with `RETURNING 1`).
    /// - Throws: ``Core/ServiceError`` `.storage` naming `operation` and the reason.
    @discardableResult
    func run(_ operation: @autoclosure () -> String, _ statement: StoreStatement) throws -> Int
}

extension SQLStore {
    public func cursor(ofFeed feed: String) throws -> FeedCursor? {
        try query("reading the cursor of feed \(feed)", Self.sql.cursor(ofFeed: feed)).first ?? nil
    }

    public func streamPosition(ofFeed feed: String) throws -> String? {
        try query("reading the stream position of feed \(feed)", Self.sql.streamPosition(ofFeed: feed)).first ?? nil
    }

    public func backend(ofFeed feed: String) throws -> String? {
        try query("reading the backend of feed \(feed)", Self.sql.backend(ofFeed: feed)).first ?? nil
    }

    public func feedNames() throws -> [String] {
        try query("listing feeds", Self.sql.feedNames())
    }

    public func daemons() throws -> [DaemonInstance] {
        try query("reading the daemons", Self.sql.daemons())
    }

    public func unresolvedVideoIDs(inFeed feed: String, limit: Int) throws -> [VideoID] {
        try query("listing unresolved videos of feed \(feed)", Self.sql.unresolvedVideoIDs(inFeed: feed, limit: limit))
    }

    /// Records the feed's live state, or clears it (`nil`). It belongs to the running daemons,
    /// not to a sync, so no lease guards it.
    public func setLiveState(_ state: String?, ofFeed feed: String) throws {
        try run("recording the live state of feed \(feed)", Self.sql.setLiveState(state, ofFeed: feed, at: Date()))
    }

    public func liveStates() throws -> [String: String] {
        Dictionary(try query("reading the live states", Self.sql.liveStates()), uniquingKeysWith: { first, _ in first })
    }
}
