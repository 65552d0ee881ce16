import Core
import Dispatch
import Foundation
import Glibc
import Synchronization

/// What a WebSocket connection may cost: how soon it must open, how quiet it may go, and how
/// much it may make the client hold.
public struct WebSocketLimits: Sendable, Equatable {
    /// No byte for this long (a ping is sent at half of it, so a live server always answers) ends the connection.
    public var idleTimeout: TimeInterval = 60
    /// The longest the server may take to accept the connection and finish the opening handshake.
    public var handshakeDeadline: TimeInterval = 30
    /// The longest message, fragments joined (RFC 6455 close code 1009 past it).
    public var maxMessageBytes = 1 << 20
    /// The most message bytes (each counted with 128 bytes of overhead) received but not yet taken
    /// by the consumer: a server that sends faster than the client stores is cut here.
    public var maxPendingBytes = 16 << 20

    public init(idleTimeout: TimeInterval = 60, handshakeDeadline: TimeInterval = 30, maxMessageBytes: Int = 1 << 20,
                maxPendingBytes: Int = 16 << 20) {
        self.idleTimeout = idleTimeout
        self.handshakeDeadline = handshakeDeadline
        self.maxMessageBytes = maxMessageBytes
        self.maxPendingBytes = maxPendingBytes
    }
}

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

    /// Closes the connection with a close frame (1001, going away) and blocks until it is
    /// closed, for at most `timeout`: for a shutdown that must not exit before the frame is out.
    public func close(waiting timeout: TimeInterval) { outbox.closeAndWait(timeout) }

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

    func closeAndWait(_ timeout: TimeInterval) {
        closing.store(true, ordering: .relaxed)
        nudge()
        guard served.load(ordering: .relaxed), !finished.load(ordering: .relaxed) else { return }
        if done.wait(timeout: .now() + timeout) == .success { done.signal() }
    }

    func append(_ text: String) {
        messages.withLock { $0.append(text) }
        nudge()
    }

    /// Everything waiting, in order, and empties the box.
    public func take() -> [String] { messages.withLock { box in defer { box.removeAll() }; return box } }
}
