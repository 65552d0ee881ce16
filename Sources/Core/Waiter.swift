import Foundation

/// How a feed's sync waits out a spent quota, a `Retry-After` or a retry's backoff: with every
/// shared permit it holds handed back meanwhile (its ``SyncSlots`` slot and, from inside a
/// request, the ``HostGate`` permit of the host), taken again when the wait is over.
///
/// The app builds one per feed and hands it to the feed's integrations (``IntegrationContext``)
/// and its sync engine, so a wait deep inside an integration never holds up another feed.
///
///     try await waiter.wait(30)                                               // between requests
///     try await waiter.wait(30, handingBack: origin.gateKey, of: context.hosts) // holding a host permit
public struct Waiter: Sendable {
    /// Waits no longer than this keep their permits: handing one back would queue the feed
    /// behind others for less time than it takes to get it again.
    public static let moment: TimeInterval = 0.1

    private let slots: SyncSlots?
    private let feed: String
    private let sleep: @Sendable (TimeInterval) async throws -> Void

    /// - Parameters:
    ///   - slots: the slots a sync of `feed` takes; `nil` where no slots are shared.
    ///   - sleep: the clock's sleep; injected so tests decide when a wait ends.
    public init(slots: SyncSlots?, feed: String,
                sleep: @escaping @Sendable (TimeInterval) async throws -> Void = { try await Task.sleep(for: .seconds($0)) }) {
        self.slots = slots
        self.feed = feed
        self.sleep = sleep
    }

    /// A waiter that holds nothing: it only sleeps.
    public static let plain = Waiter(slots: nil, feed: "")

    /// Sleeps `seconds` with the feed's sync slot handed back.
    ///
    /// - Throws: `CancellationError` when cancelled; the slot is taken back first.
    public func wait(_ seconds: TimeInterval) async throws {
        guard seconds > 0 else { return }
        guard seconds > Self.moment, let slots else { return try await sleep(seconds) }
        try await slots.withoutSlot(of: feed) { [sleep] in try await sleep(seconds) }
    }

    /// Runs `body`, a wait of unknown length (for another process's lease, say), with the
    /// feed's sync slot handed back; takes a slot again when it returns or throws.
    public func handingBack<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        guard let slots else { return try await body() }
        return try await slots.withoutSlot(of: feed, body)
    }

    /// Sleeps `seconds` with the permit for `host` (which the caller holds) and the feed's sync
    /// slot handed back; takes the slot again first, then the permit, as they were taken.
    ///
    /// - Important: Call it only while holding a permit for `host` (inside ``HostGate/withPermit(for:_:)``).
    public func wait(_ seconds: TimeInterval, handingBack host: String, of gate: HostGate) async throws {
        guard seconds > 0 else { return }
        guard seconds > Self.moment else { return try await sleep(seconds) }
        try await gate.withoutPermit(for: host) { try await wait(seconds) }
    }
}
