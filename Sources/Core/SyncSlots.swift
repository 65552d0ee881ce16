import Synchronization

/// The process's sync slots: at most ``limit`` feeds sync at once (`daemon.concurrency`).
///
/// A sync holds a slot while it works and hands it back while it waits (a spent quota, a
/// `Retry-After`, a retry's backoff), through the feed's ``Waiter``, so a feed that waits never
/// keeps another feed from syncing.
///
///     let slots = SyncSlots(limit: 4)
///     let report = try await slots.run(feed: "home") { try await engine.run() }
public final class SyncSlots: Sendable {
    /// How many feeds may sync at once.
    public var limit: Int { gate.maxInFlightPerHost }
    /// One permit per slot, under one key: the gate's queue keeps waiters in order of arrival.
    private let gate: HostGate
    /// How many slots each feed holds now; only these may be handed back.
    private let holders = Mutex<[String: Int]>([:])
    private static let key = "sync"

    public init(limit: Int) {
        gate = HostGate(maxInFlightPerHost: limit)
    }

    /// Runs `body` once a slot is free, holding it for `feed` until `body` returns.
    ///
    /// - Throws: `CancellationError` when cancelled while waiting for a slot, or what `body` throws.
    public func run<T: Sendable>(feed: String, _ body: @Sendable () async throws -> T) async throws -> T {
        try await run(feed: feed, in: take(), body)
    }

    /// A slot taken before it is known which feed gets it (``take()``): hand it to exactly one
    /// ``run(feed:in:_:)`` or ``giveBack(_:)``.
    public struct Slot: Sendable {
        fileprivate init() {}
    }

    /// Waits for a free slot, in turn with every other waiter, and takes it. The daemon's
    /// scheduler takes one before it picks the due feed that gets it, so a feed that must go
    /// first (a takeover) is not queued behind a backlog.
    ///
    /// - Throws: `CancellationError` when cancelled while waiting; then no slot is held.
    public func take() async throws -> Slot {
        try await gate.takePermit(for: Self.key)
        return Slot()
    }

    /// Gives back a slot taken with ``take()`` that no feed used.
    public func giveBack(_ slot: Slot) async {
        await gate.givePermitBack(for: Self.key)
    }

    /// Runs `body` for `feed` in a slot already taken with ``take()``, and gives the slot back
    /// when `body` returns or throws.
    public func run<T: Sendable>(feed: String, in slot: Slot, _ body: @Sendable () async throws -> T) async throws -> T {
        note(feed, holding: 1)
        let result: Result<T, any Error>
        do {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        note(feed, holding: -1)
        await giveBack(slot)
        return try result.get()
    }

    /// Runs `body` with `feed`'s slot handed back, then queues for a slot again. A feed that
    /// holds no slot (a sync run outside ``run(feed:_:)``) just runs `body`.
    ///
    /// The slot is taken back even if the task is cancelled meanwhile, so ``run(feed:_:)``
    /// always gives back exactly the one it holds.
    public func withoutSlot<T: Sendable>(of feed: String, _ body: @Sendable () async throws -> T) async throws -> T {
        let held = holders.withLock { holders in
            guard let count = holders[feed], count > 0 else { return false }
            holders[feed] = count == 1 ? nil : count - 1
            return true
        }
        guard held else { return try await body() }
        defer { note(feed, holding: 1) }
        return try await gate.withoutPermit(for: Self.key, body)
    }

    /// Slots held now, for tests and status.
    public var inUse: Int {
        get async { await gate.inFlightCount(for: Self.key) }
    }

    private func note(_ feed: String, holding change: Int) {
        holders.withLock { holders in
            let count = holders[feed, default: 0] + change
            holders[feed] = count > 0 ? count : nil
        }
    }
}
