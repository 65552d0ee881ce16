import Core
import Foundation

/// A database connection that runs ``StoreSQL``'s statements.
public protocol SQLConnection {
    /// Runs a shared statement.
    ///
    /// - Returns: how many rows it returned (a count of what it wrote, with `RETURNING 1`).
    @discardableResult
    func run(_ statement: StoreStatement) throws -> Int

    /// Runs a shared query, each row read as it says.
    func query<Row>(_ query: StoreQuery<Row>) throws -> [Row]
}

/// A store that runs ``StoreSQL``'s statements on a connection of its own: every role both
/// stores play the same way is written once, here, over the three ways a store gives to its
/// connection. What differs between the stores is how they hold a feed (a file lock, a lease
/// row checked in the write's transaction) and what their page writes and searches send.
///
/// Each way translates the database's failures (and a codec's ``MissingColumn``) into
/// ``Core/ServiceError`` `.storage`, naming `operation` and the reason.
public protocol SQLStore: Actor {
    /// The shared statements in this store's dialect.
    static var sql: StoreSQL { get }

    /// Runs `body` on the open connection.
    func withConnection<T>(_ operation: @autoclosure () -> String, _ body: (any SQLConnection) throws -> T) throws -> T

    /// Runs `body` in one transaction that commits only while `lease` is this worker's: a
    /// feed's writes outside its pages (a run record, the backend).
    ///
    /// - Throws: ``Core/ServiceError`` `.locked` when the lease was lost (a shared store).
    func writing<T>(under lease: FeedLease, _ operation: @autoclosure () -> String,
                    _ body: (any SQLConnection) throws -> T) throws -> T

    /// Runs `body` in one transaction for state that exists nowhere else (a read mark): it is
    /// committed as durably as the store commits anything, whatever it allows its pages.
    func writingLocalState<T>(_ operation: @autoclosure () -> String, _ body: (any SQLConnection) throws -> T) throws -> T
}

extension SQLStore {
    /// Runs `query` on the open connection.
    public func query<Row>(_ operation: @autoclosure () -> String, _ query: StoreQuery<Row>) throws -> [Row] {
        try withConnection(operation()) { try $0.query(query) }
    }

    /// Runs `statement` on the open connection, on its own; how many rows it returned.
    @discardableResult
    public func run(_ operation: @autoclosure () -> String, _ statement: StoreStatement) throws -> Int {
        try withConnection(operation()) { try $0.run(statement) }
    }

    public func cursor(ofFeed feed: String) throws -> FeedCursor? {
        try query("reading the cursor of feed \(feed)", Self.sql.cursor(ofFeed: feed)).first ?? nil
    }

    public func streamPosition(ofFeed feed: String) throws -> String? {
        try query("reading the stream position of feed \(feed)", Self.sql.streamPosition(ofFeed: feed)).first ?? nil
    }

    public func backend(ofFeed feed: String) throws -> String? {
        try query("reading the backend of feed \(feed)", Self.sql.backend(ofFeed: feed)).first ?? nil
    }

    public func setBackend(_ backend: String, under lease: FeedLease) throws {
        _ = try writing(under: lease, "recording the backend of feed \(lease.feed)") { try $0.run(Self.sql.setBackend(backend, ofFeed: lease.feed)) }
    }

    public func prune(_ retention: Retention, now: Date, limit: Int, under lease: FeedLease) throws -> Int {
        try writing(under: lease, "removing the posts of feed \(lease.feed) that its \"keep\" no longer keeps") { db in
            var removed = 0
            for statement in Self.sql.prune(retention, ofFeed: lease.feed, now: now, limit: limit) where removed < limit {
                removed += try db.run(statement)
            }
            if removed > 0 { try db.run(Self.sql.recordPruned(removed, ofFeed: lease.feed, now: now)) }
            return removed
        }
    }

    public func enqueue(_ deliveries: [WebhookDelivery], at now: Date) throws {
        try writingLocalState("queueing \(deliveries.count) webhook deliveries") { db in
            for delivery in deliveries { try db.run(Self.sql.enqueue(delivery, at: now)) }
        }
    }

    public func dueDeliveries(at now: Date, limit: Int) throws -> [WebhookDelivery] {
        try query("reading the webhook deliveries due", Self.sql.dueDeliveries(at: now, limit: limit))
    }

    public func removeDelivery(_ id: String) throws {
        _ = try writingLocalState("removing webhook delivery \(id)") { try $0.run(Self.sql.removeDelivery(id)) }
    }

    public func retryDelivery(_ id: String, attempts: Int, at next: Date) throws {
        _ = try writingLocalState("rescheduling webhook delivery \(id)") { try $0.run(Self.sql.retryDelivery(id, attempts: attempts, at: next)) }
    }

    public func recordSync(_ outcome: SyncOutcome, under lease: FeedLease) throws {
        // A run whose lease another worker took over is not recorded: it would overlap theirs.
        try writing(under: lease, "recording the sync of feed \(lease.feed)") { db in
            for statement in Self.sql.recordRun(outcome, ofFeed: lease.feed) { try db.run(statement) }
        }
    }

    public func setRead(_ read: Bool, postID: PostID, inFeed feed: String?) throws -> [String] {
        try mark("marking post \(postID) \(read ? "read" : "unread")", postID: postID, inFeed: feed) {
            Self.sql.setRead(read, postID: postID, inFeed: $0, at: $1)
        }
    }

    public func setStarred(_ starred: Bool, postID: PostID, inFeed feed: String?) throws -> [String] {
        try mark("\(starred ? "starring" : "unstarring") post \(postID)", postID: postID, inFeed: feed) {
            Self.sql.setStarred(starred, postID: postID, inFeed: $0, at: $1)
        }
    }

    /// Runs the statement `change` makes for the one feed holding the post, when only one does.
    private func mark(_ operation: String, postID: PostID, inFeed feed: String?,
                      _ change: (String, Date) -> StoreStatement) throws -> [String] {
        try writingLocalState(operation) { db in
            let feeds = try db.query(Self.sql.feeds(holding: postID, in: feed))
            guard feeds.count == 1 else { return feeds }
            try db.run(change(feeds[0], Date()))
            return feeds
        }
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
        Dictionary(try query("reading the live states", Self.sql.liveStates()).map { ($0.feed, $0.state) }, uniquingKeysWith: { first, _ in first })
    }

    /// Deletes every row of the feed (``StoreSQL/purge(feed:alsoFrom:)``) on `db`, in the
    /// caller's transaction, once the caller made sure no sync of the feed is under way.
    ///
    /// - Returns: how many posts it deleted.
    public static func deleteRows(ofFeed feed: String, alsoFrom tables: [String] = [], on db: any SQLConnection) throws -> Int {
        let posts = try db.query(sql.postCount(ofFeed: feed)).first ?? 0
        for statement in sql.purge(feed: feed, alsoFrom: tables) { try db.run(statement) }
        return posts
    }
}

/// Runs `body`, its database's failures (`Failure`) and a codec's ``MissingColumn`` thrown as
/// ``Core/ServiceError`` `.storage` naming `operation` and the reason.
public func translatingFailures<T, Failure: Error & CustomStringConvertible>(
    _ failure: Failure.Type, _ operation: () -> String, _ body: () throws -> T
) throws -> T {
    do {
        return try body()
    } catch let error as Failure {
        throw ServiceError(.storage, operation(), error.description)
    } catch let error as MissingColumn {
        throw ServiceError(.storage, operation(), error.description)
    }
}
