import Synchronization

/// Counts the requests integrations send, so a sync can report what it cost.
///
/// One counter is shared by a feed's services; each integration adds one per request it puts
/// on the wire (retries included).
public final class RequestCounter: Sendable {
    private let count = Mutex(0)

    public init() {}

    public func add(_ n: Int = 1) { count.withLock { $0 += n } }

    public var value: Int { count.withLock { $0 } }
}
