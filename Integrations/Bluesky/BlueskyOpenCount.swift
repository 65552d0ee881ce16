import Synchronization

/// How many of a connection's sockets have opened.
final class BlueskyOpenCount: Sendable {
    private let count = Atomic(0)

    func increment() -> Int { count.add(1, ordering: .relaxed).newValue }
}
