import Core
import Foundation
import StoreKit
#if canImport(Glibc)
import Glibc
#endif

/// Leases: one file lock for every feed's lease, held by one process at a time.
extension SQLiteFeedStore {
    /// Takes a hold on the store's write lock: every feed's lease is the one lock, so one
    /// process at a time syncs into the file (SQLite has one writer anyway). Holds within one
    /// process are counted, so the daemon's feeds share it.
    public func acquireLease(onFeed feed: String, holder: String, wait: TimeInterval, onlyIfDue: Bool) async throws -> FeedLease? {
        let deadline = Date().addingTimeInterval(wait)
        var stale: Int32?
        while true {
            switch try lock.tryAcquire(holder: holder) {
            case .held(let stalePid):
                stale = stalePid
            case .busy(let current) where Date() >= deadline:
                throw ServiceError(.locked, "waiting for the store's write lock \(lock.path)",
                                   "\(current ?? "another process") holds it; gave up after \(Int(wait)) s")
            case .busy:
                try await Task.sleep(for: .milliseconds(100))
                continue
            }
            break
        }
        let lease = FeedLease(feed: feed, token: "\(getpid())", tookOverFrom: stale.map { "process \($0)" })
        // One daemon serves a SQLite store, so only its own schedule is recorded; the check
        // keeps the meaning the same as on a shared store.
        if onlyIfDue, let next = try? nextAttempt(ofFeed: feed), next.timeIntervalSinceNow > 1 {
            lock.release()
            return nil
        }
        return lease
    }

    /// A daemon's claim: the lease, or the feed's next attempt when it is still ahead. Another
    /// process holding the file lock past `wait` is an error, as for any claim: one daemon serves
    /// a SQLite store, and `dueSince` adds nothing to its own schedule.
    public func claimLease(onFeed feed: String, holder: String, wait: TimeInterval, dueSince _: Date) async throws -> LeaseClaim {
        guard let lease = try await acquireLease(onFeed: feed, holder: holder, wait: wait, onlyIfDue: false) else {
            return .syncedSince(nextAttempt: nil)
        }
        if let next = try? nextAttempt(ofFeed: feed), next.timeIntervalSinceNow > 1 {
            lock.release()
            return .syncedSince(nextAttempt: next)
        }
        return .acquired(lease)
    }

    public func release(_ lease: FeedLease) { lock.release() }

    private func nextAttempt(ofFeed feed: String) throws -> Date? {
        let db = try db("reading the schedule of feed \(feed)")
        return try storage("reading the schedule of feed \(feed)") {
            try db.statement("SELECT next_attempt_at FROM feeds WHERE name = ?").query([.text(feed)]) {
                $0.optionalInt64(0).map(StoredTime.date)
            }.first ?? nil
        }
    }
}
