import Core
import Foundation
import StoreKit
#if canImport(Glibc)
import Glibc
#endif

/// Daemon presence and the schedule: one daemon at a time, whose schedule every feed's is.
extension SQLiteFeedStore {
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
        let daemon = DaemonInstance(id: "\(host)/\(process)/\(StoredTime.milliseconds(startedAt))", host: host, process: process,
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
                              .integer(StoredTime.milliseconds(daemon.startedAt)), .integer(StoredTime.milliseconds(Date()))])
            }
        }
    }

    public func leave(_ daemon: DaemonInstance) {
        _ = try? run("clearing the daemon heartbeat", Self.sql.leave(daemon))
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

    public func setNextAttempt(_ date: Date?, ofFeed feed: String) throws {
        let db = try db("scheduling feed \(feed)")
        try storage("scheduling feed \(feed)") {
            try db.statement("""
                INSERT INTO feeds (name, next_attempt_at) VALUES (?1, ?2)
                ON CONFLICT (name) DO UPDATE SET next_attempt_at = ?2 WHERE feeds.next_attempt_at IS NOT ?2
                """).run([.text(feed), .integer(date.map(StoredTime.milliseconds))])
        }
    }
}
