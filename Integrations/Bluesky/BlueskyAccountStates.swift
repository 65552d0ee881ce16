import Synchronization

/// Whether each account a live connection follows was last seen active, from Jetstream's
/// `account` events, kept across the connection's reconnects: a replayed event (a reconnect
/// rewinds a few seconds) or a repeated one is not told again.
final class BlueskyAccountStates: Sendable {
    private let active = Mutex<[String: Bool]>([:])

    init() {}

    /// Records the account's state; returns whether it differs from the last one recorded
    /// (an account not seen before counts as active).
    func changed(_ did: String, active now: Bool) -> Bool {
        active.withLock { states in
            defer { states[did] = now }
            return (states[did] ?? true) != now
        }
    }
}
