import Core
import Dispatch
import Foundation

/// What a WebSocket stream delivers: first that it opened, then the server's data messages.
/// Pings, pongs and the close handshake are handled by the connection.
public enum WebSocketEvent: Sendable, Equatable {
    case opened
    case text(String)
    case binary([UInt8])
}

/// A transport that can open a WebSocket (RFC 6455) and hand its messages over as they arrive.
public protocol WebSocketTransport: Sendable {
    /// Opens a WebSocket to `request.url` (`ws://` or `wss://`; `request.headers` go on the upgrade).
    ///
    /// The stream yields ``WebSocketEvent/opened`` once the handshake is checked, then each
    /// message. Ending the iteration (or cancelling its task) sends a close frame (1001) and
    /// closes the connection.
    ///
    /// - Throws (through the stream): ``Core/ServiceError`` — `.unavailable` (refused, reset,
    ///   no handshake within the deadline, idle past ``WebSocketLimits/idleTimeout``, closed by the
    ///   server), `.contractViolation` (a redirect, a bad handshake, a frame that breaks RFC 6455,
    ///   a message over the cap, messages faster than they are taken), or the error of an HTTP
    ///   status that refused the upgrade.
    func webSocket(_ request: HTTPRequest, limits: WebSocketLimits) -> WebSocketStream
}

/// The messages of one open WebSocket; iterate it once. ``send(_:)`` queues a text message.
public struct WebSocketStream: AsyncSequence, Sendable {
    public typealias Element = WebSocketEvent
    let base: AsyncThrowingStream<WebSocketEvent, any Error>
    let pending: PendingBytes
    let outbox: WebSocketOutbox

    /// A stream of `events`, as a test's transport builds one; what is sent goes to `outbox`.
    public init(_ events: AsyncThrowingStream<WebSocketEvent, any Error>, outbox: WebSocketOutbox = WebSocketOutbox()) {
        base = events
        pending = PendingBytes()
        self.outbox = outbox
    }

    init(base: AsyncThrowingStream<WebSocketEvent, any Error>, pending: PendingBytes, outbox: WebSocketOutbox) {
        self.base = base
        self.pending = pending
        self.outbox = outbox
    }

    /// Queues `text` to go to the server as one text message (sent within a fraction of a second).
    public func send(_ text: String) { outbox.append(text) }

    /// Closes the connections with a close frame (1001, going away) each, and blocks until they
    /// are closed, for at most `timeout` in all: for a shutdown that must not exit before the
    /// frames are out. A connection still connecting (TCP, TLS) is left to its own deadline.
    public static func close(_ streams: [WebSocketStream], waiting timeout: TimeInterval) {
        streams.forEach { $0.outbox.requestClose() }
        let deadline = DispatchTime.now() + timeout
        streams.forEach { $0.outbox.waitClosed(until: deadline) }
    }

    /// Hands over the messages, counting each one taken off the pending bound.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<WebSocketEvent, any Error>.AsyncIterator
        let pending: PendingBytes

        public mutating func next() async throws -> WebSocketEvent? {
            let event = try await base.next()
            if let event { pending.taken(Self.cost(of: event)) }
            return event
        }

        static func cost(of event: WebSocketEvent) -> Int {
            switch event {
            case .opened: 0
            case .text(let text): text.utf8.count + 128
            case .binary(let bytes): bytes.count + 128
            }
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), pending: pending) }
}
