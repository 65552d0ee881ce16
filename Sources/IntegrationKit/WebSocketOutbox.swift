import Dispatch
import Foundation
import Glibc
import Synchronization

/// Text messages waiting to go to the server, shared by the stream's two ends, and the
/// connection's close request.
public final class WebSocketOutbox: Sendable {
    private let messages = Mutex<[String]>([])
    /// Wakes the connection's thread at once (a close, a message to send): the write end of a pipe it polls.
    private let wake = Mutex<Int32>(-1)
    private let closing = Atomic(false)
    private let done = DispatchSemaphore(value: 0)
    private let finished = Atomic(false)
    /// Whether a connection's thread serves this box (a test's stream has none to wait for).
    private let served = Atomic(false)

    /// An empty box, for a test's ``WebSocketStream``.
    public init() {}

    /// A connection's thread will serve this box: ``closeAndWait(_:)`` waits for it.
    func expectConnection() { served.store(true, ordering: .relaxed) }

    /// The connection's thread: the descriptor to write to wake it.
    func attach(wake descriptor: Int32) { wake.withLock { $0 = descriptor } }

    var isClosing: Bool { closing.load(ordering: .relaxed) }

    /// Wakes the connection's thread.
    func nudge() {
        wake.withLock { descriptor in
            guard descriptor >= 0 else { return }
            var byte: UInt8 = 1
            _ = Glibc.write(descriptor, &byte, 1)
        }
    }

    /// The connection's thread has ended.
    func markFinished() {
        wake.withLock { $0 = -1 }
        finished.store(true, ordering: .relaxed)
        done.signal()
    }

    /// Asks the connection to close (a close frame, then the end), at once.
    func requestClose() {
        closing.store(true, ordering: .relaxed)
        nudge()
    }

    /// Blocks until the connection's thread has ended, or `deadline`.
    func waitClosed(until deadline: DispatchTime) {
        guard served.load(ordering: .relaxed), !finished.load(ordering: .relaxed) else { return }
        if done.wait(timeout: deadline) == .success { done.signal() }
    }

    func append(_ text: String) {
        messages.withLock { $0.append(text) }
        nudge()
    }

    /// Everything waiting, in order, and empties the box.
    public func take() -> [String] { messages.withLock { box in defer { box.removeAll() }; return box } }
}
