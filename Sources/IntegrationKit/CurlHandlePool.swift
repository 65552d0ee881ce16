import CCurl
import Foundation
import Synchronization

/// Idle libcurl easy handles, each keeping its connections open for the next transfer, and the
/// one way a transfer runs on one: on a thread of its own (libcurl blocks; ``TransferThreads``),
/// never on Swift's cooperative pool. ``CurlTransport`` and ``CurlDownloader`` each keep one.
///
/// Each easy handle has a connection cache of its own (libcurl shares one between handles only
/// within a multi handle, or through a share handle, whose connection cache is not supported
/// across threads). So a transfer takes the idle handle whose last transfer went to the same
/// origin, and finds its connection open: requests that alternate between many hosts (the
/// media archive's, round the hosts of 50 posts) reuse one connection per host instead of
/// opening one per request. Which handle a transfer takes changes nothing it sends: every
/// transfer resets its handle and sets its own URL and header fields.
final class CurlHandlePool: Sendable {
    /// Idle handles, the least recently used first, each with the origin of its last transfer.
    private let idle = Mutex<[(origin: String, box: Handle)]>([])
    /// How many idle handles (so open connections, one or a few each) are kept at most; past it
    /// the least recently used is cleaned up, closing its connections.
    static let maxIdle = 64

    deinit { close() }

    /// Runs `transfer` on an idle handle of `origin` (else a new one) on a thread of its own
    /// (``TransferThreads``); the handle goes back to the pool after a success, and is cleaned up
    /// after a failure (its connection may be in any state). `cancel` is called when the task is cancelled meanwhile.
    ///
    /// - Parameter origin: where the transfer goes (``Origin``'s description), so the next
    ///   transfer there takes the same handle and its open connection.
    func perform<T: Sendable>(origin: String, _ transfer: @escaping @Sendable (UnsafeMutableRawPointer?) -> Result<T, any Error>,
                              cancel: @escaping @Sendable () -> Void) async throws -> T {
        let box = idle.withLock { handles in
            handles.lastIndex { $0.origin == origin }.map { handles.remove(at: $0).box }
        } ?? Handle(handle: curl_easy_init())
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                TransferThreads.shared.run { [self] in
                    let result = transfer(box.handle)
                    if case .success = result { keep(box, origin: origin) } else { curl_easy_cleanup(box.handle) }
                    continuation.resume(with: result)
                }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Puts `box` back as the most recently used, cleaning up the least recently used past ``maxIdle``.
    private func keep(_ box: Handle, origin: String) {
        let evicted: Handle? = idle.withLock { handles in
            handles.append((origin, box))
            return handles.count > Self.maxIdle ? handles.removeFirst().box : nil
        }
        if let evicted { curl_easy_cleanup(evicted.handle) }
    }

    /// Closes the idle connections; transfers in flight keep their handles.
    func close() {
        for entry in idle.withLock({ handles in defer { handles.removeAll() }; return handles }) { curl_easy_cleanup(entry.box.handle) }
    }

    /// An easy handle moved between threads.
    ///
    /// `@unchecked Sendable`: libcurl allows a handle to move between threads as long as one
    /// thread at a time uses it, and the pool hands each to one transfer at a time.
    private struct Handle: @unchecked Sendable {
        let handle: UnsafeMutableRawPointer?
    }
}
