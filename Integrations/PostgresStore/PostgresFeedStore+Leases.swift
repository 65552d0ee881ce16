import Core
import Foundation
import StoreKit

/// Leases: claiming, renewing and checking a feed's row in `feed_leases`, and the fence every
/// feed-scoped write passes.
extension PostgresFeedStore {
    /// Pushes back the expiry of every lease this worker holds, on a remade connection if the
    /// server dropped the last one: a restart or failover must not cost the leases.
    func renewLeases() {
        guard let connection, !held.isEmpty else { return }
        let tokens = Array(held.values), period = "\(Int64(leasePeriod * 1000))"
        // A lease another worker took over meanwhile matches no row. Its token stays in `held`
        // until the sync gives it back, so the sync's next commit meets the fence and fails,
        // rather than finding no lease to check and committing as if it had one.
        let renew = { () throws -> Void in
            connection.reconnectIfBroken()
            try connection.query("""
                UPDATE feed_leases SET expires_at = \(Self.nowMs) + $2 WHERE token = ANY($1::text[])
                """, [pgArray(tokens), period])
        }
        do {
            try renew()
        } catch {
            // A connection the server closed shows only when used: remade, the renewal is tried
            // once more. One that stopped answering is remade at the next renewal instead, so
            // one renewal never waits twice.
            if !connection.isBroken && connection.isClosed { try? renew() }
        }
    }

    func describeHolder(_ holder: String) -> String { "\(holder) on \(host), process \(process)" }

    /// Claims the lease row, once; the outcome for ``acquireLease(onFeed:holder:wait:onlyIfDue:)``:
    /// busy with the live lease's expiry, or not due with the feed's recorded next attempt.
    enum Claim { case held(FeedLease), busy(String, until: Date), notDue(nextAttempt: Date?) }

    /// With `dueSince`, a daemon's claim is also not due when a sync of the feed that began at or
    /// after it succeeded: its worker gave the lease back and is about to record the next attempt.
    func claim(_ feed: String, holder: String, onlyIfDue: Bool, dueSince: Date? = nil) throws -> Claim {
        let operation = "taking the lease on feed \(feed)"
        let db = try db(operation)
        return try storage(operation) {
            do {
                // One round trip (issue 40; it took two): the row read, and the take, which decides
                // in SQL on the row this transaction has locked, with BEGIN and COMMIT.
                let token = UUID().uuidString
                let begin = Self.beginWithGenericPlans
                let answers = try db.pipeline(begin + [Self.leaseRowInsert(feed), Self.leaseRowRead(feed, dueSince: dueSince),
                                                       leaseTake(feed, holder: holder, token: token, onlyIfDue: onlyIfDue, dueSince: dueSince),
                                                       ("COMMIT", [])]).map { try $0.get() }
                return decide(answers[begin.count + 1].first, took: !answers[begin.count + 2].isEmpty, feed: feed, token: token, onlyIfDue: onlyIfDue)
            } catch {
                db.rollbackIfOpen()
                throw error
            }
        }
    }

    /// The lease row, inserted only when missing: a plain ON CONFLICT checks the key as an insert
    /// does, and so waits for any worker's page transaction that holds the row (its renewal).
    private static func leaseRowInsert(_ feed: String) -> PostgresConnection.Statement {
        ("""
         INSERT INTO feed_leases (feed) SELECT $1::text WHERE NOT EXISTS (SELECT 1 FROM feed_leases WHERE feed = $1::text)
         ON CONFLICT DO NOTHING
         """, [feed])
    }

    /// The lease row, locked, with what the claim decides on and what the sync reads first (the
    /// feed's backend, cursor, and whether it has unresolved videos: ``ClaimPrefetch``). SKIP
    /// LOCKED: a row another worker is claiming at this instant is that worker's, for at most one
    /// lease period.
    private static func leaseRowRead(_ feed: String, dueSince: Date?) -> PostgresConnection.Statement {
        ("""
         SELECT l.holder, l.token IS NOT NULL AND l.expires_at > \(nowMs),
                l.token IS NOT NULL AND l.expires_at <= \(nowMs),
                \(scheduledAhead("f.next_attempt_at")),
                $2::bigint IS NOT NULL AND \(succeededSince(feed: "$1", since: "$2::bigint")),
                l.expires_at, f.next_attempt_at,
                f.backend, f.cursor, f.cursor_validator, EXISTS (SELECT 1 FROM videos v WHERE v.feed = $1 AND v.resolved = 0)
         FROM feed_leases l LEFT JOIN feeds f ON f.name = l.feed WHERE l.feed = $1 FOR UPDATE OF l SKIP LOCKED
         """, [feed, dueSince.map { "\(StoredTime.milliseconds($0))" }])
    }

    /// Takes the lease when the row is free and (with `onlyIfDue`) the feed due: the conditions
    /// ``decide(_:took:feed:token:onlyIfDue:)`` reads from the row, checked by the server on the row
    /// this transaction locked (SKIP LOCKED: a row another worker is claiming is left to it).
    private func leaseTake(_ feed: String, holder: String, token: String, onlyIfDue: Bool, dueSince: Date?) -> PostgresConnection.Statement {
        ("""
         UPDATE feed_leases SET holder = $2, instance = $3, token = $4, expires_at = \(Self.nowMs) + $5
         WHERE feed = $1 AND feed IN (SELECT feed FROM feed_leases WHERE feed = $1 FOR UPDATE SKIP LOCKED)
           AND NOT (token IS NOT NULL AND expires_at > \(Self.nowMs))
           AND NOT ($6::boolean AND ((SELECT \(Self.scheduledAhead("f.next_attempt_at")) FROM feeds f WHERE f.name = $1) IS TRUE
                OR ($7::bigint IS NOT NULL AND \(Self.succeededSince(feed: "$1", since: "$7::bigint")))))
         RETURNING 1
         """, [feed, describeHolder(holder), instance, token, "\(Int64(leasePeriod * 1000))", onlyIfDue ? "t" : "f",
               dueSince.map { "\(StoredTime.milliseconds($0))" }])
    }

    /// The claim's test that another worker synced the feed since this one found it due, in SQL
    /// (the claim's read, its take and the bulk ``feedsSynced(since:)`` ask it alike): a next
    /// attempt recorded ahead, or a successful run that ended at or after `since`.
    static func scheduledAhead(_ nextAttempt: String) -> String { "\(nextAttempt) > \(nowMs) + 1000" }

    static func succeededSince(feed: String, since: String) -> String {
        "EXISTS (SELECT 1 FROM sync_runs r WHERE r.feed = \(feed) AND r.finished_at >= \(since) AND r.error IS NULL)"
    }

    /// The claim's outcome: the lease when the take took it, else why not, from the locked lease
    /// row (`nil`: another worker is claiming it).
    private func decide(_ row: [String?]?, took: Bool, feed: String, token: String, onlyIfDue: Bool) -> Claim {
        guard let row, row.count == 11 else {
            // Locked by another worker's claim when read, let go by the time of the take: taken.
            return took ? .held(FeedLease(feed: feed, token: token)) : .busy("another worker", until: Date().addingTimeInterval(leasePeriod))
        }
        guard took else {
            if row[1] == "t" { return .busy(row[0] ?? "another worker", until: Self.date(row[5]) ?? Date().addingTimeInterval(leasePeriod)) }
            // Not due (or, rarely, made due a moment after the row was read): left as synced since.
            return .notDue(nextAttempt: Self.date(row[6]))
        }
        prefetched[feed] = ClaimPrefetch(token: token, backend: row[7], cursor: row[8].map { FeedCursor(position: $0, validator: row[9]) },
                                         hasUnresolvedVideos: row[10] != "f")
        // A lease still named in the row ran out: its holder died or stalled, and this claim took it over.
        return .held(FeedLease(feed: feed, token: token, tookOverFrom: row[1] == "t" || row[2] == "t" ? row[0] : nil))
    }

    /// A stored time (ms since 1970) as a date.
    private static func date(_ milliseconds: String?) -> Date? { milliseconds.flatMap(Int64.init).map(StoredTime.date) }

    /// The lease this process holds on `feed`, if any: every write to the feed checks it is still its own.
    func heldToken(_ feed: String) -> String? { held[feed] }

    /// Proves, inside the caller's transaction, that this worker holds `lease` (not merely some
    /// lease on the feed: one a sync lost and took again is another) and that
    /// it is still its own, and renews it: a worker that never took the lease, gave it back (a
    /// daemon stopping), or stalled past it while another took the feed over commits nothing.
    /// The renewal locks the lease row until the transaction ends, so no other worker can take
    /// the feed between the check and the commit.
    ///
    /// - Throws: ``ServiceError`` `.locked`.
    func checkLease(_ lease: FeedLease, _ operation: String, in db: PostgresConnection) throws {
        let renewal = try leaseRenewal(of: lease, operation)
        try leaseKept(try db.query(renewal.sql, renewal.parameters), operation)
    }

    /// The statement of ``checkLease(_:_:in:)`` for `lease`, for a caller that sends it with
    /// others: it returns a row when the lease is still this worker's, and must be checked with
    /// ``leaseKept(_:_:)`` before the transaction may commit.
    ///
    /// - Throws: ``ServiceError`` `.locked` when this worker does not hold `lease` (it was given
    ///   back, or never taken here).
    func leaseRenewal(of lease: FeedLease, _ operation: String) throws -> PostgresConnection.Statement {
        guard heldToken(lease.feed) == lease.token else { throw Self.notHeld(operation) }
        // Every write under the lease passes here: what the claim read ahead may be out of date after it.
        prefetched[lease.feed] = nil
        return ("UPDATE feed_leases SET expires_at = \(Self.nowMs) + $3 WHERE feed = $1 AND token = $2 RETURNING 1",
                [lease.feed, lease.token, "\(Int64(leasePeriod * 1000))"])
    }

    private static func notHeld(_ operation: String) -> ServiceError {
        ServiceError(.locked, operation, "this worker does not hold the feed's lease (it was given back or never taken); nothing was kept")
    }

    static func otherFeed(_ lease: FeedLease, _ operation: String) -> ServiceError {
        ServiceError(.locked, operation, "the lease given is on feed \(lease.feed), not this one; nothing was kept")
    }

    /// Fails unless ``leaseRenewal(of:_:)`` found the lease still this worker's.
    ///
    /// - Throws: ``ServiceError`` `.locked`.
    func leaseKept(_ renewed: [[String?]], _ operation: String) throws {
        guard !renewed.isEmpty else {
            throw ServiceError(.locked, operation, "this worker's lease on the feed ran out and another worker took it over; nothing was kept")
        }
    }

    /// For the writes a worker makes outside a sync (the schedule): the lease row must not be
    /// another worker's live lease; while this worker holds one, it must still be its own.
    /// Locks the lease row until the transaction ends.
    func checkNoOtherHolder(_ feed: String, _ operation: String, in db: PostgresConnection) throws {
        if let token = heldToken(feed) { return try checkLease(FeedLease(feed: feed, token: token), operation, in: db) }
        let other = try db.query("""
            SELECT holder FROM feed_leases WHERE feed = $1 AND token IS NOT NULL AND expires_at > \(Self.nowMs) FOR UPDATE
            """, [feed])
        if let row = other.first {
            throw ServiceError(.locked, operation, "\(row[0] ?? "another worker") holds the feed's lease; nothing was kept")
        }
    }

    /// Sends `statements` in one transaction behind `lease`, in two round trips: BEGIN, the lease's
    /// renewal and the statements in one pipeline, then COMMIT once the renewal proved the lease
    /// still this worker's (else the transaction rolls back: nothing is kept).
    ///
    /// - Returns: each statement's rows.
    @discardableResult
    func fenced(_ lease: FeedLease, _ operation: String, sending statements: [PostgresConnection.Statement]) throws -> [[[String?]]] {
        let db = try db(operation)
        return try storage(operation) {
            do {
                let answers = try db.pipeline([("BEGIN", []), try leaseRenewal(of: lease, operation)] + statements)
                _ = try answers[0].get()
                try leaseKept(try answers[1].get(), operation)
                let rows = try answers.dropFirst(2).map { try $0.get() }
                try db.execute("COMMIT")
                return rows
            } catch {
                db.rollbackIfOpen()
                throw error
            }
        }
    }

    /// Runs `body` in one transaction behind `lease` (``checkLease(_:_:in:)``).
    @discardableResult
    func fenced<T>(_ lease: FeedLease, _ operation: @autoclosure () -> String, _ body: (PostgresConnection) throws -> T) throws -> T {
        let operation = operation()
        let db = try db(operation)
        return try storage(operation) {
            do {
                // BEGIN and the lease's check in one round trip.
                let opened = try db.pipeline([("BEGIN", []), try leaseRenewal(of: lease, operation)]).map { try $0.get() }
                try leaseKept(opened[1], operation)
                let value = try body(db)
                try db.execute("COMMIT")
                return value
            } catch {
                db.rollbackIfOpen()
                throw error
            }
        }
    }
}

extension PostgresFeedStore: FeedLeases {
    /// A daemon's claim: the lease, or the live lease's expiry, or the feed's recorded next attempt.
    public func claimLease(onFeed feed: String, holder: String, wait: TimeInterval, dueSince: Date) async throws -> LeaseClaim {
        switch try claim(feed, holder: holder, onlyIfDue: true, dueSince: dueSince) {
        case .held(let lease):
            held[feed] = lease.token
            return .acquired(lease)
        case .busy(_, let until): return .heldUntil(until)
        case .notDue(let next): return .syncedSince(nextAttempt: next)
        }
    }

    public func acquireLease(onFeed feed: String, holder: String, wait: TimeInterval, onlyIfDue: Bool) async throws -> FeedLease? {
        let deadline = Date().addingTimeInterval(wait)
        while true {
            switch try claim(feed, holder: holder, onlyIfDue: onlyIfDue) {
            case .held(let lease):
                held[feed] = lease.token
                return lease
            case .notDue:
                return nil
            case .busy(let current, _):
                // A daemon leaves a feed another worker holds to that worker.
                if onlyIfDue { return nil }
                guard Date() < deadline else {
                    throw ServiceError(.locked, "waiting for the lease on feed \(feed)", "\(current) holds it; gave up after \(Int(wait)) s")
                }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    public func release(_ lease: FeedLease) {
        forget(lease)
        _ = try? run("releasing the lease on feed \(lease.feed)", Self.releasing(lease).sql, Self.releasing(lease).parameters)
    }

    /// Stops holding `lease` here (only this lease: a sync that lost it may give it back after
    /// the feed was taken again here).
    func forget(_ lease: FeedLease) {
        if held[lease.feed] == lease.token { held[lease.feed] = nil }
        prefetched[lease.feed] = nil
    }

    /// Frees the lease row while it is still `lease`'s.
    static func releasing(_ lease: FeedLease) -> PostgresConnection.Statement {
        ("UPDATE feed_leases SET token = NULL, holder = NULL, instance = NULL, expires_at = NULL WHERE feed = $1 AND token = $2",
         [lease.feed, lease.token])
    }
}

extension PostgresFeedStore: RecordingRelease {
    /// The run's record and the lease's release in one transaction behind the lease (two round
    /// trips, where the record and the release took three). When the record cannot be kept, the
    /// lease is given back on its own.
    public func recordSync(_ outcome: SyncOutcome, releasing lease: FeedLease) throws {
        do {
            try fenced(lease, "recording the sync of feed \(lease.feed)",
                       sending: Self.sql.recordRun(outcome, ofFeed: lease.feed).map(\.pipelined) + [Self.releasing(lease)])
            forget(lease)
        } catch {
            release(lease)
            throw error
        }
    }
}
