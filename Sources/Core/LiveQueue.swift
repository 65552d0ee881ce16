import Synchronization

/// What a live connection received and its consumer has not taken yet, handed over in batches.
///
/// The reader pushes each item as it arrives; the consumer takes everything waiting at once, so
/// items that arrive while a batch is handled (a store commit, a hydration call) go into the next
/// batch together, and a lone item is handed over at once (no added wait). Bounded: a stream
/// that runs more than ``capacity`` items ahead of its consumer fails, and the reconnect's
/// catch-up sync fills in. The Mastodon and Bluesky live paths and the daemon's live mirror share it.
public final class LiveQueue<Item: Sendable>: Sendable {
    /// What ``next()`` finds under the lock.
    private enum Now { case batch([Item]?), cancelled, wait }

    private struct State {
        var items: [Item] = []
        var finished = false
        var cancelled = false
        var waiter: CheckedContinuation<[Item]?, any Error>?
    }

    /// How many items may wait.
    public let capacity: Int
    private let overflow: ServiceError
    private let state = Mutex(State())

    /// The most items that wait by default.
    public static var defaultCapacity: Int { 10_000 }

    /// - Parameter overflow: what ``push(_:)`` throws past `capacity`, naming the stream.
    public init(capacity: Int = defaultCapacity, overflow: ServiceError) {
        self.capacity = capacity
        self.overflow = overflow
    }

    /// Adds an item.
    ///
    /// - Throws: the queue's overflow error when ``capacity`` items are waiting already.
    public func push(_ item: Item) throws {
        let waiter: CheckedContinuation<[Item]?, any Error>? = try state.withLock { state in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            guard state.items.count < capacity else { throw overflow }
            state.items.append(item)
            return nil
        }
        waiter?.resume(returning: [item])
    }

    /// No more items will come: ``next()`` answers `nil` once the last batch is taken.
    public func finish() {
        let waiter = state.withLock { state in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Everything waiting, once there is something; `nil` after ``finish()`` and the last batch.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled.
    public func next() async throws -> [Item]? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[Item]?, any Error>) in
                let now: Now = state.withLock { state in
                    if state.cancelled { return .cancelled }
                    if !state.items.isEmpty {
                        defer { state.items.removeAll(keepingCapacity: true) }
                        return .batch(state.items)
                    }
                    if state.finished { return .batch(nil) }
                    state.waiter = continuation
                    return .wait
                }
                switch now {
                case .batch(let batch): continuation.resume(returning: batch)
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .wait: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                state.cancelled = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }
}
