import CCurl
import Foundation
import Synchronization

/// Idle libcurl easy handles, each keeping its connections open for the next transfer, and the
/// one way a transfer runs on one: on a thread of its own (libcurl blocks), never on Swift's
/// cooperative pool. ``CurlTransport`` and ``CurlDownloader`` each keep one.
final class CurlHandlePool: Sendable {
    private let idle = Mutex<[Handle]>([])

    deinit { close() }

    /// Runs `transfer` on an idle handle (or a new one) on a thread of its own; the handle goes
    /// back to the pool after a success, and is cleaned up after a failure (its connection may
    /// be in any state). `cancel` is called when the task is cancelled meanwhile.
    func perform<T: Sendable>(_ transfer: @escaping @Sendable (UnsafeMutableRawPointer?) -> Result<T, any Error>,
                              cancel: @escaping @Sendable () -> Void) async throws -> T {
        let box = idle.withLock { $0.popLast() } ?? Handle(handle: curl_easy_init())
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                Thread.detachNewThread { [self] in
                    let result = transfer(box.handle)
                    if case .success = result { idle.withLock { $0.append(box) } } else { curl_easy_cleanup(box.handle) }
                    continuation.resume(with: result)
                }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Closes the idle connections; transfers in flight keep their handles.
    func close() {
        for box in idle.withLock({ boxes in defer { boxes.removeAll() }; return boxes }) { curl_easy_cleanup(box.handle) }
    }

    /// An easy handle moved between threads.
    ///
    /// `@unchecked Sendable`: libcurl allows a handle to move between threads as long as one
    /// thread at a time uses it, and the pool hands each to one transfer at a time.
    private struct Handle: @unchecked Sendable {
        let handle: UnsafeMutableRawPointer?
    }
}
