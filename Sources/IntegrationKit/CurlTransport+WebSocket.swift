import CCurl
import Core
import Foundation
import Synchronization

extension CurlTransport: WebSocketTransport {
    /// Opens a WebSocket on a thread of its own: libcurl connects (TCP, TLS, a proxy's tunnel)
    /// with `CURLOPT_CONNECT_ONLY`, and RFC 6455 runs over `curl_easy_send`/`curl_easy_recv`
    /// (the system libcurl has no WebSocket support of its own).
    public func webSocket(_ request: HTTPRequest, limits: WebSocketLimits) -> WebSocketStream {
        let pending = PendingBytes()
        let outbox = WebSocketOutbox()
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: WebSocketEvent.self, throwing: (any Error).self)
        let connection = CurlWebSocket(request: request, limits: limits, pending: pending, outbox: outbox, continuation: continuation)
        outbox.expectConnection()
        continuation.onTermination = { _ in
            connection.cancel()
            outbox.nudge()
        }
        Thread.detachNewThread {
            var pipe: [Int32] = [-1, -1]
            let piped = Glibc.pipe(&pipe) == 0
            if piped {
                _ = fcntl(pipe[0], F_SETFL, O_NONBLOCK)
                _ = fcntl(pipe[1], F_SETFL, O_NONBLOCK)
                outbox.attach(wake: pipe[1])
            }
            let handle = curl_easy_init()
            connection.wake = piped ? pipe[0] : -1
            connection.run(on: handle)
            curl_easy_cleanup(handle)
            outbox.markFinished()
            if piped {
                Glibc.close(pipe[0])
                Glibc.close(pipe[1])
            }
        }
        return WebSocketStream(base: stream, pending: pending, outbox: outbox)
    }
}

/// One WebSocket connection, run by its own thread from connect to close.
///
/// `@unchecked Sendable`: everything but `cancelled` is touched only by the connection's
/// thread (inside ``run(on:)``); `cancelled` is atomic, and the continuation and the
/// outbox are Sendable.
final class CurlWebSocket: @unchecked Sendable {
    let request: HTTPRequest
    let limits: WebSocketLimits
    let operation: String
    private let pending: PendingBytes
    private let outbox: WebSocketOutbox
    private let continuation: AsyncThrowingStream<WebSocketEvent, any Error>.Continuation
    private let cancelled = Atomic(false)
    private var handle: UnsafeMutableRawPointer?
    private var socket: curl_socket_t = -1
    /// The read end of the pipe that wakes the loop (a close or a message to send); -1 without one.
    var wake: Int32 = -1
    private var random = SystemRandomNumberGenerator()
    /// How often an idle loop wakes to look at the idle clock and the ping schedule; a close or
    /// a message to send wakes it at once through the pipe, so this costs only idle wakeups.
    static let tick: Int32 = 1000

    struct Failed: Error { let error: ServiceError }

    init(request: HTTPRequest, limits: WebSocketLimits, pending: PendingBytes, outbox: WebSocketOutbox,
         continuation: AsyncThrowingStream<WebSocketEvent, any Error>.Continuation) {
        self.request = request
        self.limits = limits
        self.pending = pending
        self.outbox = outbox
        self.continuation = continuation
        let host = request.url.host ?? "?"
        operation = "following the WebSocket at \(request.url.scheme ?? "ws")://\(host)\(request.url.port.map { ":\($0)" } ?? "")\(request.url.path)"
    }

    func cancel() { cancelled.store(true, ordering: .relaxed) }

    private var isCancelled: Bool { cancelled.load(ordering: .relaxed) || outbox.isClosing }

    private func unavailable(_ reason: String) -> Failed { Failed(error: ServiceError(.unavailable, operation, reason)) }
    private func violation(_ reason: String) -> Failed { Failed(error: ServiceError(.contractViolation, operation, reason)) }

    /// Connects, shakes hands, and relays messages until the connection ends; then finishes the continuation.
    func run(on handle: UnsafeMutableRawPointer?) {
        guard let handle else {
            return continuation.finish(throwing: ServiceError(.unavailable, operation,
                                                              DescriptorLimit.reasonIfExhausted() ?? "libcurl could not start a connection"))
        }
        self.handle = handle
        do {
            try connect()
            let leftover = try handshake()
            continuation.yield(.opened)
            try relay(leftover)
            continuation.finish()
        } catch let failed as Failed {
            continuation.finish(throwing: isCancelled ? CancellationError() : failed.error)
        } catch {
            continuation.finish(throwing: error)
        }
    }

    /// TCP (and TLS for `wss://`) through libcurl, which keeps proxies and certificates as for every request.
    private func connect() throws {
        guard let scheme = request.url.scheme?.lowercased(), scheme == "ws" || scheme == "wss",
              var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false) else {
            throw violation("the URL is not ws:// or wss://")
        }
        components.scheme = scheme == "wss" ? "https" : "http"
        components.query = nil
        let setup = [
            feedsync_setopt_string(handle, CURLOPT_URL, components.url?.absoluteString ?? ""),
            feedsync_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
            feedsync_setopt_long(handle, CURLOPT_CONNECT_ONLY, 1),
            feedsync_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
            feedsync_setopt_long(handle, CURLOPT_TCP_KEEPALIVE, 1),
            feedsync_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(limits.handshakeDeadline * 1000)),
        ]
        guard setup.allSatisfy({ $0 == CURLE_OK }) else { throw unavailable("libcurl refused the connection's options") }
        let code = curl_easy_perform(handle)
        guard code == CURLE_OK else {
            switch code {
            case CURLE_COULDNT_CONNECT: throw unavailable(DescriptorLimit.reasonIfExhausted() ?? "the connection was refused")
            case CURLE_COULDNT_RESOLVE_HOST: throw unavailable("the host name cannot be resolved")
            case CURLE_OPERATION_TIMEDOUT: throw unavailable("the server did not accept the connection within \(Int(limits.handshakeDeadline)) s")
            case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CACERT_BADFILE:
                throw unavailable("the TLS connection could not be verified")
            default: throw unavailable("the connection failed (\(Terminal.safe(String(cString: curl_easy_strerror(code)), limit: 120)))")
            }
        }
        guard feedsync_getinfo_socket(handle, &socket) == CURLE_OK, socket >= 0 else { throw unavailable("libcurl gave no socket") }
    }

    /// Sends the upgrade and checks the answer within the deadline; returns what followed the answer's head.
    private func handshake() throws -> [UInt8] {
        let handshake = WebSocketHandshake()
        try send(handshake.request(for: request.url, headers: request.headers))
        let deadline = Date().addingTimeInterval(limits.handshakeDeadline)
        var head: [UInt8] = []
        let end: [UInt8] = [13, 10, 13, 10]
        while true {
            if let range = head.firstRange(of: end) {
                try handshake.check(String(decoding: head[..<range.lowerBound], as: UTF8.self), operation: operation)
                return Array(head[range.upperBound...])
            }
            guard head.count <= WebSocketHandshake.maxHeadBytes else {
                throw violation("the server's answer head is longer than \(WebSocketHandshake.maxHeadBytes) bytes")
            }
            guard Date() < deadline else { throw unavailable("the server did not complete the WebSocket handshake within \(Int(limits.handshakeDeadline)) s") }
            guard !isCancelled else { throw CancellationError() }
            guard let bytes = try receive() else { throw unavailable("the server closed the connection during the handshake") }
            if bytes.isEmpty { wait(for: Int16(POLLIN)) } else { head += bytes }
        }
    }

    /// The open connection: messages in, pings and pongs, the outbox out, until a close or a failure.
    private func relay(_ leftover: [UInt8]) throws {
        var reader = WebSocketReader(maxMessageBytes: limits.maxMessageBytes)
        var lastByte = Date()
        var lastPing = Date()
        var incoming = leftover
        while true {
            if isCancelled {
                try? send(frame: .close(1001, reason: "going away"))
                throw CancellationError()
            }
            for text in outbox.take() { try send(frame: WebSocketFrame(.text, Array(text.utf8))) }
            if !incoming.isEmpty {
                let messages: [WebSocketMessage]
                do { messages = try reader.feed(incoming) } catch {
                    try? send(frame: .close(error.code))
                    throw violation(error.reason)
                }
                incoming.removeAll(keepingCapacity: true)
                for message in messages {
                    switch message {
                    case .text(let text): try deliver(.text(text), cost: text.utf8.count)
                    case .binary(let bytes): try deliver(.binary(bytes), cost: bytes.count)
                    case .ping(let payload): try send(frame: WebSocketFrame(.pong, payload))
                    case .pong: break
                    case .close(let code, let reason):
                        try? send(frame: .close(code ?? 1000))
                        let shown = code.map { "code \($0)" } ?? "no code"
                        throw unavailable("the server closed the connection (\(shown)\(reason.isEmpty ? "" : ": " + Terminal.safe(reason, limit: 120)))")
                    }
                }
            }
            let now = Date()
            if now.timeIntervalSince(lastByte) > limits.idleTimeout {
                throw unavailable("nothing arrived for \(Int(limits.idleTimeout)) s")
            }
            if now.timeIntervalSince(lastPing) >= limits.idleTimeout / 2 {
                try send(frame: WebSocketFrame(.ping, Array("feedsync".utf8)))
                lastPing = now
            }
            guard let bytes = try receive() else { throw unavailable("the server closed the connection without a close frame") }
            if bytes.isEmpty {
                wait(for: Int16(POLLIN))
            } else {
                incoming = bytes
                lastByte = Date()
            }
        }
    }

    /// Hands a message to the consumer, unless it would hold more than the pending bound.
    private func deliver(_ event: WebSocketEvent, cost: Int) throws {
        guard pending.added(cost + 128, limit: limits.maxPendingBytes) else {
            try? send(frame: .close(1008, reason: "too fast"))
            throw violation("the server sends messages faster than they can be stored (more than \(limits.maxPendingBytes >> 20) MiB waiting)")
        }
        continuation.yield(event)
    }

    private func send(frame: WebSocketFrame) throws {
        try send(frame.encoded(mask: (0..<4).map { _ in UInt8.random(in: 0...255, using: &random) }))
    }

    /// Sends every byte, waiting for the socket when it is full, for at most the idle timeout.
    private func send(_ bytes: [UInt8]) throws {
        var offset = 0
        let deadline = Date().addingTimeInterval(limits.idleTimeout)
        while offset < bytes.count {
            var sent = 0
            let code = bytes[offset...].withUnsafeBytes { curl_easy_send(handle, $0.baseAddress, $0.count, &sent) }
            switch code {
            case CURLE_OK: offset += sent
            case CURLE_AGAIN:
                guard Date() < deadline else { throw unavailable("the server stopped reading for \(Int(limits.idleTimeout)) s") }
                wait(for: Int16(POLLOUT))
            default: throw unavailable("the connection was lost while sending")
            }
        }
    }

    /// What the socket holds now: bytes, an empty array when nothing is waiting, `nil` when the server closed it.
    private func receive() throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var received = 0
        let code = buffer.withUnsafeMutableBytes { curl_easy_recv(handle, $0.baseAddress, $0.count, &received) }
        switch code {
        case CURLE_OK: return received == 0 ? nil : Array(buffer[..<received])
        case CURLE_AGAIN: return []
        default: throw unavailable("the connection was lost")
        }
    }

    /// Waits until the socket is ready for `events`, the loop is woken, or a tick passes.
    private func wait(for events: Int16) {
        var descriptors = [pollfd(fd: socket, events: events, revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        _ = poll(&descriptors, wake >= 0 ? 2 : 1, Self.tick)
        if descriptors[1].revents != 0 {
            var drain = [UInt8](repeating: 0, count: 64)
            while read(wake, &drain, drain.count) > 0 {}
        }
    }
}
