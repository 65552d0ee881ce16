import Core
import Foundation

/// What a sync came to, as the scheduler plans from it: a lease another daemon holds, a feed
/// synced by another, the server's own lower bound, and the log line of a takeover.
extension Scheduler {
    /// What a claim that found a feed held saw, and when it decided to look again.
    struct HeldLease {
        /// The other daemon's lease's expiry, as the store said.
        var expiry: Date
        /// When this daemon learnt it and planned the next claim (`max(expiry, decided) + leaseTick`).
        var decided: Date
        /// When this daemon first found the feed due, before it found it held: a sync another
        /// daemon began since then and finished makes a later claim decline, so two daemons that
        /// both look again once a dead daemon's lease runs out do not both sync the feed.
        var dueSince: Date
    }

    /// Keeps this thread busy for `seconds`, deaf to cancellation: the test hook's stand-in
    /// for a long synchronous parse.
    @concurrent static func spin(_ seconds: Double) async {
        let end = ContinuousClock.now + .seconds(seconds)
        var turns = 0
        while ContinuousClock.now < end { turns &+= 1 }
        withExtendedLifetime(turns) {}
    }

    /// A feed that another daemon holds, or synced since this one scheduled it.
    struct NotDue: Error {
        /// When this daemon claims the feed again.
        var lookAgain: Date
        /// Held now (rather than synced since): what the claim saw.
        var held: HeldLease?
    }

    /// A stale lease taken over, with the program's own deadlines in ms since 1970: when this
    /// daemon planned the claim, and, when an earlier claim had found the feed held, the expiry
    /// it saw then and when it decided (the plan is `max(expiry, decided) + leaseTick`).
    func logTakeover(_ name: String, from holder: String, planned: Date, after held: HeldLease?) {
        func ms(_ date: Date) -> String { "\(Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))" }
        guard let held else { return log.warn("stale_lease_taken_over", ["feed": name, "from": holder, "planned_ms": ms(planned)]) }
        log.warn("stale_lease_taken_over", ["feed": name, "from": holder, "planned_ms": ms(planned),
                                            "expiry_ms": ms(held.expiry), "decided_ms": ms(held.decided)])
    }

    /// When to look again at a feed another daemon synced: at its next attempt as that daemon
    /// recorded it, or, with none ahead, one interval from now.
    static func lookAgain(_ nextAttempt: Date?, every interval: TimeInterval) -> Date {
        nextAttempt.flatMap { $0 > Date() ? $0 : nil } ?? Date() + interval
    }

    /// How many due feeds the dispatcher asks the store about at once (``Core/SyncedSinceCheck``).
    static let lookAhead = 64

    /// How often a daemon on a shared store asks for leases that ran out held (``Core/ExpiredLeaseCheck``):
    /// a dead daemon's feed is claimed at most this long after its lease ran out, plus a slot's wait.
    static let expiredLeaseLook: Duration = .seconds(5)

    /// How many expired leases one look reads at most; the rest come at the next look.
    static let expiredLeaseBatch = 1_024

    /// How long after another daemon's lease runs out this daemon claims the feed: the claim
    /// then finds the lease either renewed (its holder lives) or free to take over.
    static let leaseTick: TimeInterval = 0.5

    /// The earliest time the backend asked to be polled again, after a success or a rate limit.
    func politeBound(_ result: Result<SyncReport, any Error>) -> Date? {
        switch result {
        case .success(let report): return report.polling?.notBefore
        case .failure(let error as ServiceError):
            if case .rateLimited(let until) = error.code { return until }
            return nil
        case .failure: return nil
        }
    }
}
