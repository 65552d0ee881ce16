import Synchronization

/// The newest `time_us` a live connection handled, kept across its reconnects.
final class JetstreamPosition: Sendable {
    private let last = Mutex<Int64?>(nil)

    init() {}

    func handled(_ time: Int64) { last.withLock { $0 = max($0 ?? time, time) } }

    /// Where the next connection resumes: the position committed to the store when there is one
    /// (what was handled here but not committed, a batch whose write failed, is streamed again),
    /// else the last handled here; never before `oldest`.
    func start(from committed: Int64?, oldest: Int64) {
        last.withLock { $0 = (committed ?? $0).map { max($0, oldest) } }
    }

    /// Where a reconnect resumes: the last time handled, less `rewind`; `nil` (live) before any event.
    func resumeCursor(rewind: Int64) -> Int64? { last.withLock { $0.map { max(1, $0 - rewind) } } }
}
