import Core
import Foundation
import IntegrationKit
import Synchronization

/// What the Jetstream connections received and the hydrator has not handled yet, in order.
///
/// The readers push; the hydrator takes everything waiting at once, so events that arrive
/// while a `getPosts` call is out are hydrated together in the next (no added wait for a lone
/// event). Bounded: a stream that runs ``capacity`` events ahead fails, and the reconnect's
/// catch-up fills in.
final class BlueskyLiveQueue: Sendable {
    enum Item: Sendable {
        case connected
        case event(JetstreamEvent)
    }

    private struct State {
        var items: [Item] = []
        var cancelled = false
        var waiter: CheckedContinuation<[Item], any Error>?
    }

    static let capacity = 10_000
    private let state = Mutex(State())

    /// - Throws: ``ServiceError`` `.contractViolation` past ``capacity``.
    func push(_ item: Item, _ operation: String) throws {
        let waiter: CheckedContinuation<[Item], any Error>? = try state.withLock { state in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            guard state.items.count < Self.capacity else {
                throw ServiceError(.contractViolation, operation, "Jetstream sends events faster than they can be hydrated "
                                   + "(more than \(Self.capacity) waiting)")
            }
            state.items.append(item)
            return nil
        }
        waiter?.resume(returning: [item])
    }

    /// Everything waiting, once there is something.
    func next() async throws -> [Item] {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[Item], any Error>) in
                enum Now { case items([Item]), cancelled, wait }
                let now: Now = state.withLock { state in
                    if state.cancelled { return .cancelled }
                    if !state.items.isEmpty {
                        defer { state.items.removeAll(keepingCapacity: true) }
                        return .items(state.items)
                    }
                    state.waiter = continuation
                    return .wait
                }
                switch now {
                case .items(let items): continuation.resume(returning: items)
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
