import Synchronization

/// The newest `time_us` a live connection handled, kept across its reconnects.
final class JetstreamPosition: Sendable {
    private let last = Mutex<Int64?>(nil)

    init() {}

    func handled(_ time: Int64) { last.withLock { $0 = max($0 ?? time, time) } }

    /// Where a restarted daemon resumes: the stored position, when nothing was handled here yet.
    func start(from stored: Int64?) {
        guard let stored else { return }
        last.withLock { $0 = $0 ?? stored }
    }

    /// Where a reconnect resumes: the last time handled, less `rewind`; `nil` (live) before any event.
    func resumeCursor(rewind: Int64) -> Int64? { last.withLock { $0.map { max(1, $0 - rewind) } } }
}
