import Foundation
import IntegrationKit
import Synchronization

/// The sockets of a live connection, so that ending its stream closes them.
final class BlueskyLiveSockets: Sendable {
    private let sockets = Mutex<[WebSocketStream]>([])

    func add(_ more: [WebSocketStream]) { sockets.withLock { $0 += more } }

    /// Closes every socket with a close frame, waiting at most `timeout` in all.
    func closeAll(waiting timeout: TimeInterval) {
        WebSocketStream.close(sockets.withLock { $0 }, waiting: timeout)
    }
}
