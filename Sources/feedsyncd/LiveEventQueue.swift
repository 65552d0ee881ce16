import Core
import Synchronization

/// Events a live connection received and the mirror has not written yet, handed over in batches.
///
/// The reader pushes each event as it arrives; the writer takes everything waiting at once, so
/// events that arrive while a batch commits go into the next transaction together, and a lone
/// event is written at once (no added wait). Bounded: a stream that runs more than
/// ``capacity`` events ahead of the store fails, and the reconnect's catch-up sync fills in.
final class LiveEventQueue: Sendable {
    private struct State {
        var events: [LiveEvent] = []
        var finished = false
        var cancelled = false
        var waiter: CheckedContinuation<[LiveEvent]?, any Error>?
    }

    struct Overflow: Error, CustomStringConvertible {
        var description: String { "the stream sent more than \(LiveEventQueue.capacity) events ahead of the store; reconnecting" }
    }

    static let capacity = 10_000
    private let state = Mutex(State())

    /// Adds an event. - Throws: ``Overflow`` past ``capacity``.
    func push(_ event: LiveEvent) throws {
        let waiter: CheckedContinuation<[LiveEvent]?, any Error>? = try state.withLock { state in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            guard state.events.count < Self.capacity else { throw Overflow() }
            state.events.append(event)
            return nil
        }
        waiter?.resume(returning: [event])
    }

    /// No more events will come.
    func finish() {
        let waiter = state.withLock { state in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Everything waiting, once there is something; `nil` after ``finish()`` and the last batch.
    func next() async throws -> [LiveEvent]? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[LiveEvent]?, any Error>) in
                enum Now { case batch([LiveEvent]?), cancelled, wait }
                let now: Now = state.withLock { state in
                    if state.cancelled { return .cancelled }
                    if !state.events.isEmpty {
                        defer { state.events.removeAll(keepingCapacity: true) }
                        return .batch(state.events)
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
