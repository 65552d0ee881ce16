import Core
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Leases and daemon presence: one file lock for every feed's lease, one daemon at a time.
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

    public func release(_ lease: FeedLease) { lock.release() }

    private func nextAttempt(ofFeed feed: String) throws -> Date? {
        let db = try db("reading the schedule of feed \(feed)")
        return try storage("reading the schedule of feed \(feed)") {
            try db.statement("SELECT next_attempt_at FROM feeds WHERE name = ?").query([.text(feed)]) {
                $0.optionalInt64(0).map(Date.init(milliseconds:))
            }.first ?? nil
        }
    }

    /// Makes this process the store's one daemon for as long as it runs or until ``leave(_:)``:
    /// two daemons on one file would double every poll.
    public func join(startedAt: Date) throws -> DaemonInstance {
        switch try daemonLock.tryAcquire(holder: "feedsyncd") {
        case .held: break
        case .busy(let holder):
            throw ServiceError(.locked, "starting feedsyncd on the store \(path)",
                               "another feedsyncd (\(holder ?? "another process")) already serves it; stop that one first")
        }
        let host = ProcessInfo.processInfo.hostName
        let process = "\(getpid())"
        let daemon = DaemonInstance(id: "\(host)/\(process)/\(millisecondsSince1970(startedAt))", host: host, process: process,
                                    startedAt: startedAt, beatAt: Date())
        do {
            try beat(daemon)
        } catch {
            daemonLock.release()
            throw error
        }
        return daemon
    }

    public func beat(_ daemon: DaemonInstance) throws {
        let db = try db("recording the daemon heartbeat")
        try storage("recording the daemon heartbeat") {
            // One daemon at a time: a row left by one that died goes with the next one's first beat.
            try db.withTransaction {
                try db.statement("DELETE FROM daemon WHERE instance <> ?").run([.text(daemon.id)])
                try db.statement("""
                    INSERT INTO daemon (instance, host, pid, started_at, beat_at) VALUES (?1, ?2, ?3, ?4, ?5)
                    ON CONFLICT (instance) DO UPDATE SET beat_at = ?5
                    """).run([.text(daemon.id), .text(daemon.host), .integer(Int64(daemon.process)),
                              .integer(millisecondsSince1970(daemon.startedAt)), .integer(millisecondsSince1970(Date()))])
            }
        }
    }

    public func leave(_ daemon: DaemonInstance) {
        if let db = try? db("clearing the daemon heartbeat") {
            _ = try? db.statement("DELETE FROM daemon WHERE instance = ?").run([.text(daemon.id)])
        }
        daemonLock.release()
    }

    /// Clears the next attempts of `feeds`: one daemon serves a SQLite store, so every schedule
    /// in it is this daemon's.
    public func unschedule(_ feeds: [String]) throws {
        let db = try db("clearing the schedule of this daemon's feeds")
        try storage("clearing the schedule of this daemon's feeds") {
            try db.withTransaction {
                let clear = try db.statement("UPDATE feeds SET next_attempt_at = NULL WHERE name = ? AND next_attempt_at IS NOT NULL")
                for feed in feeds { try clear.run([.text(feed)]) }
            }
        }
    }

    public func daemons() throws -> [DaemonInstance] {
        let db = try db("reading the daemon heartbeat")
        return try storage("reading the daemon heartbeat") {
            try db.statement("SELECT instance, host, pid, started_at, beat_at FROM daemon ORDER BY started_at").query { row in
                DaemonInstance(id: row.string(0) ?? "", host: row.string(1) ?? "", process: row.optionalInt64(2).map { "\($0)" } ?? "",
                               startedAt: Date(milliseconds: row.int64(3)), beatAt: Date(milliseconds: row.int64(4)))
            }
        }
    }

    public func setNextAttempt(_ date: Date?, ofFeed feed: String) throws {
        let db = try db("scheduling feed \(feed)")
        try storage("scheduling feed \(feed)") {
            try db.statement("""
                INSERT INTO feeds (name, next_attempt_at) VALUES (?1, ?2)
                ON CONFLICT (name) DO UPDATE SET next_attempt_at = ?2 WHERE feeds.next_attempt_at IS NOT ?2
                """).run([.text(feed), .integer(date.map(millisecondsSince1970))])
        }
    }
}
