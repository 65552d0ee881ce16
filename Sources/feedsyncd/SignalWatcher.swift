import Core
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Watches the daemon's signals on a thread of its own, so a stop is seen however busy the
/// tasks are, and turns them into events: SIGHUP reloads; the first SIGTERM or SIGINT starts a
/// graceful stop; a second one, or the stop deadline, ends the process at once.
///
/// Why not a `DispatchSource` bridged into an `AsyncStream` (swift-service-lifecycle's way):
/// the stream's consumer is a task, and the handler ran on a global queue. A synchronous parse
/// on every thread of the cooperative pool (two on a 2-core machine) kept both from running,
/// so neither the stop nor the watch for a second signal, which only that consumer set up,
/// ever happened. Here a C handler writes the signal's number into a pipe, and a dedicated
/// thread blocked on that pipe acts on it: no task and no shared queue is involved, and the
/// second signal and the deadline call `_exit` from that thread.
///
///     let signals = SignalWatcher.start(log: log)
///     for await signal in signals.events { … }
final class SignalWatcher: Sendable {
    /// The longest a graceful stop may take: then the process exits anyway, with a log line.
    /// The manual (docs/daemon.md, feedsyncd(8)) promises an exit within 8 s of SIGTERM; this leaves room for the exit itself.
    static let stopDeadline: Duration = .seconds(6)

    /// SIGHUP, and the first SIGTERM or SIGINT, in the order they came.
    let events: AsyncStream<Int32>

    private init(events: AsyncStream<Int32>) { self.events = events }

    /// Installs the handlers for SIGTERM, SIGINT and SIGHUP and starts the watching thread.
    static func start(log: Logger, deadline: Duration = stopDeadline) -> SignalWatcher {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            log.error("signals_unwatched", ["error": String(cString: strerror(errno))])
            return SignalWatcher(events: AsyncStream { _ in })
        }
        // Neither end goes to a child process, and the handler must never block, whatever the reader does.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        signalPipe.store(ends[1], ordering: .releasing)
        let (events, continuation) = AsyncStream.makeStream(of: Int32.self)
        let readEnd = ends[0]
        Thread.detachNewThread {
            watch(readEnd, log: log, deadline: deadline, continuation: continuation)
        }
        for number in [SIGTERM, SIGINT, SIGHUP] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = onSignal
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(number, &action, nil)
        }
        return SignalWatcher(events: events)
    }

    /// The watching thread: acts on each signal read from `fd`, and on the deadline.
    private static func watch(_ fd: Int32, log: Logger, deadline: Duration, continuation: AsyncStream<Int32>.Continuation) {
        var stopBy: ContinuousClock.Instant?
        while true {
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let timeout = stopBy.map { Int32(clamping: max(0, ($0 - .now).milliseconds)) } ?? -1
            let count = poll(&ready, 1, timeout)
            if count == 0 {
                log.warn("stop_deadline_passed", ["after_s": "\(deadline.components.seconds)",
                                                  "action": "exited without waiting for the syncs under way"])
                _exit(0)
            }
            var byte: UInt8 = 0
            guard count > 0, read(fd, &byte, 1) == 1 else { continue }
            let number = Int32(byte)
            if number == SIGHUP {
                continuation.yield(number)
            } else if stopBy == nil {
                stopBy = .now + deadline
                log.info("stopping", ["signal": number == SIGTERM ? "SIGTERM" : "SIGINT"])
                continuation.yield(number)
            } else {
                // The store stays consistent: an unfinished page transaction is never committed.
                log.warn("stopped_immediately")
                _exit(0)
            }
        }
    }
}

/// The write end of the watcher's pipe, for the signal handler; set before any handler is installed.
private let signalPipe = Atomic<Int32>(-1)

/// The signal handler: async-signal-safe, it only writes the signal's number into the pipe.
private func onSignal(_ number: Int32) {
    let fd = signalPipe.load(ordering: .acquiring)
    guard fd >= 0 else { return }
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(fd, &byte, 1)
    errno = saved
}

private extension Duration {
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
