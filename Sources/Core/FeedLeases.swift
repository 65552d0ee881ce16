import Foundation

/// Per-feed leases: no feed is synced by two processes at once.
///
/// A lease is held by one process for one feed until released. A store bounds it in time and
/// renews it while the holder lives, so a holder that dies without releasing (SIGKILL, a lost
/// machine) frees its feeds within one lease period; a store may instead tie the lease to
/// something the kernel frees when the process dies (a file lock).
public protocol FeedLeases: Sendable {
    /// Takes the lease on `feed`.
    ///
    /// - Parameters:
    ///   - holder: who takes it, for the message another process sees: `"feedsync pull"`.
    ///   - wait: how long to wait for another holder to let go.
    ///   - onlyIfDue: a daemon's claim: give up at once (returning `nil`) when another daemon
    ///     holds the feed, or when the feed's next attempt, as any daemon recorded it, is still
    ///     ahead (another daemon synced it meanwhile).
    /// - Returns: the lease, or `nil` when `onlyIfDue` and the feed is not this daemon's to sync now.
    /// - Throws: ``ServiceError`` `.locked` naming the holder when the wait runs out.
    func acquireLease(onFeed feed: String, holder: String, wait: TimeInterval, onlyIfDue: Bool) async throws -> FeedLease?

    /// A daemon's claim (`onlyIfDue`) that also gives up when a sync of the feed that began at or
    /// after `dueSince` (when this daemon found the feed due) succeeded: another daemon synced it
    /// and gave its lease back, but has not yet recorded the next attempt. A store whose
    /// leases do not span daemons makes the plain `onlyIfDue` claim.
    func acquireLease(onFeed feed: String, holder: String, wait: TimeInterval, dueSince: Date) async throws -> FeedLease?

    /// Gives a lease back; the feed is free for others at once.
    func release(_ lease: FeedLease) async
}

extension FeedLeases {
    /// The plain daemon's claim: `onlyIfDue`, `dueSince` unused.
    public func acquireLease(onFeed feed: String, holder: String, wait: TimeInterval, dueSince: Date) async throws -> FeedLease? {
        try await acquireLease(onFeed: feed, holder: holder, wait: wait, onlyIfDue: true)
    }
}

/// A held lease on one feed.
public struct FeedLease: Sendable, Hashable {
    public var feed: String
    /// Tells this hold from any other, in the store.
    public var token: String
    /// A holder that died without letting go, whose lease this one took over, in words:
    /// `"process 4242"`.
    public var tookOverFrom: String?

    public init(feed: String, token: String, tookOverFrom: String? = nil) {
        self.feed = feed
        self.token = token
        self.tookOverFrom = tookOverFrom
    }
}
