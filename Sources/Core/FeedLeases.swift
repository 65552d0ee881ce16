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

    /// A daemon's claim (`onlyIfDue`) that says why it gives up, so the daemon knows when to look
    /// again: the feed is held by another daemon now (``LeaseClaim/heldUntil(_:)``, its lease's
    /// expiry), or it was synced by another since this daemon found it due at `dueSince`
    /// (``LeaseClaim/syncedSince(nextAttempt:)``): its next attempt is ahead as recorded, or a
    /// sync that ended at or after `dueSince` succeeded and gave its lease back before recording
    /// one (one under way when this daemon found the feed due counts: it synced the feed). A store whose leases do not span daemons makes the plain `onlyIfDue` claim.
    func claimLease(onFeed feed: String, holder: String, wait: TimeInterval, dueSince: Date) async throws -> LeaseClaim

    /// Gives a lease back; the feed is free for others at once.
    func release(_ lease: FeedLease) async
}

extension FeedLeases {
    /// The plain daemon's claim: `onlyIfDue`, `dueSince` unused; declined means synced since,
    /// with no next attempt known.
    public func claimLease(onFeed feed: String, holder: String, wait: TimeInterval, dueSince: Date) async throws -> LeaseClaim {
        try await acquireLease(onFeed: feed, holder: holder, wait: wait, onlyIfDue: true).map(LeaseClaim.acquired)
            ?? .syncedSince(nextAttempt: nil)
    }
}

/// What a daemon's claim on a feed (``FeedLeases/claimLease(onFeed:holder:wait:dueSince:)``) came to.
public enum LeaseClaim: Sendable, Hashable {
    /// The lease is this daemon's: sync the feed.
    case acquired(FeedLease)
    /// Another daemon holds the feed now; its lease runs out at this time unless renewed, when a
    /// holder that died leaves the feed to be taken over.
    case heldUntil(Date)
    /// Another daemon synced the feed since this one found it due; its next attempt as recorded
    /// in the store, `nil` when none is recorded yet.
    case syncedSince(nextAttempt: Date?)

    /// The lease, when acquired.
    public var lease: FeedLease? {
        if case .acquired(let lease) = self { return lease }
        return nil
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

/// A store whose leases span daemons, asked in one look which of many due feeds another daemon
/// synced since this one found them due: in a cluster each daemon meets the feeds the others
/// synced, and this spares it a claim (a transaction, a slot, a sync engine) for each.
///
/// - Important: It answers only what ``FeedLeases/claimLease(onFeed:holder:wait:dueSince:)``,
///   asked at the same moment, would answer with ``LeaseClaim/syncedSince(nextAttempt:)``. A
///   feed it leaves out is claimed as before: the claim stays the authority. A store one daemon
///   has to itself (a local file) does not offer it.
public protocol SyncedSinceCheck: Sendable {
    /// Those of `due` that another daemon synced since this one found them due, with their
    /// next attempt as recorded (`nil` when none is).
    ///
    /// - Throws: ``ServiceError`` `.storage`; the caller then claims each feed as before.
    func feedsSynced(since due: [DueFeed]) async throws -> [SyncedFeed]
}

/// A store whose leases span daemons, asked which leases ran out while still held: their holder
/// died or stalls without giving them back. A daemon that walks the feeds in an order of its own
/// learns of a dead daemon's feeds this way at their expiry, not when its walk comes to them.
///
/// - Important: It only points at feeds; the claim (``FeedLeases/claimLease(onFeed:holder:wait:dueSince:)``)
///   still decides whether the lease is free to take over, renewed meanwhile, or synced since.
public protocol ExpiredLeaseCheck: Sendable {
    /// Up to `limit` leases that are held (a token is set) and whose expiry has passed, by the
    /// store's clock, earliest first.
    ///
    /// - Throws: ``ServiceError`` `.storage`; the caller then looks again later.
    func expiredLeases(limit: Int) async throws -> [ExpiredLease]
}

/// A lease still held past its expiry (``ExpiredLeaseCheck``).
public struct ExpiredLease: Sendable, Hashable {
    public var feed: String
    public var expiry: Date

    public init(feed: String, expiry: Date) {
        self.feed = feed
        self.expiry = expiry
    }
}

/// A feed this daemon found due at `since`, for ``SyncedSinceCheck/feedsSynced(since:)``.
public struct DueFeed: Sendable, Hashable {
    public var feed: String
    /// When this daemon found it due, as the claim's `dueSince`.
    public var since: Date

    public init(feed: String, since: Date) {
        self.feed = feed
        self.since = since
    }
}

/// A feed another daemon synced since this one found it due (``SyncedSinceCheck``).
public struct SyncedFeed: Sendable, Hashable {
    public var feed: String
    /// Its next attempt as recorded in the store; `nil` when none is recorded yet.
    public var nextAttempt: Date?

    public init(feed: String, nextAttempt: Date?) {
        self.feed = feed
        self.nextAttempt = nextAttempt
    }
}
