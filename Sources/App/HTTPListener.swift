import Core
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A small HTTP/1.1 listener of our own, for the daemon's `/metrics` and `/healthz`, for the
/// loopback callback of `feedsync login`, and for any listener added later: a slow or hostile
/// client cannot knock it over or lock anyone out, and it never slows syncing.
///
/// One thread polls every socket; nothing here touches Swift's cooperative pool or the store.
/// Each connection gets one request and one answer, then it is closed (no keep-alive).
///
/// What it guarantees, whatever the clients do (the figures are ``Limits``, set per listener):
/// - **A new connection always gets a slot.** At most ``Limits/maxConnections`` are open; one
///   past that closes the *oldest* open connection, whatever it is doing (waiting for its head,
///   or being answered), so a health check that arrives while every slot is held is answered.
/// - **A client that does not read holds no slot for long.** An answer is written as the
///   socket takes it; when the socket takes no byte of it for ``Limits/writeStallTimeout``
///   (its buffer stays full: the client stopped reading, or reads a byte now and then), the
///   connection is cut. Even a client that keeps reading has ``Limits/writeTimeout`` for the
///   whole answer.
/// - **A client that does not send holds no slot for long.** The whole request head must arrive
///   within ``Limits/headTimeout`` (a byte now and then does not extend it), and at most
///   ``Limits/maxHeadBytes`` of it (more: `431`).
/// - A small answer (`/healthz`) fits in the socket's buffer, so it is written and its slot
///   freed as soon as its request head is read.
///
/// ``counts`` tells what happened to the connections, for tests and for a curious operator.
///
///     let listener = try HTTPListener(address: ListenAddress("127.0.0.1:9464")) { request in
///         .init(status: 200, body: "ok\n")
///     }
///     listener.start()
public final class HTTPListener: Sendable {
    /// The bounds a listener holds its clients to (see the guarantees on ``HTTPListener``).
    public struct Limits: Sendable, Equatable {
        /// Connections open at once; a new one past this closes the oldest.
        public var maxConnections: Int
        /// How long a client has to send its whole request head.
        public var headTimeout: Duration
        /// The longest request head.
        public var maxHeadBytes: Int
        /// How long the socket may take no byte of an answer (its buffer full) before the
        /// connection is cut: a client that stops reading is left this soon.
        public var writeStallTimeout: Duration
        /// How long a client has to read a whole answer, however steadily it reads.
        public var writeTimeout: Duration
        /// The longest request body (a `POST`'s, which must arrive with its head within
        /// ``headTimeout``; more: `413`). 0, the default, takes no `POST` at all (`405`).
        public var maxBodyBytes: Int
        /// How long an asynchronous handler may take to answer before the client gets `503`.
        public var answerTimeout: Duration

        /// The defaults: 64 connections, 5 s and 8 KiB for the head, 2 s without progress and 10 s in all for the
        /// answer, no bodies, 30 s for an asynchronous handler.
        public init(maxConnections: Int = 64, headTimeout: Duration = .seconds(5), maxHeadBytes: Int = 8 * 1024,
                    writeStallTimeout: Duration = .seconds(2), writeTimeout: Duration = .seconds(10), maxBodyBytes: Int = 0,
                    answerTimeout: Duration = .seconds(30)) {
            self.maxConnections = max(1, maxConnections)
            self.headTimeout = headTimeout
            self.maxHeadBytes = max(64, maxHeadBytes)
            self.writeStallTimeout = writeStallTimeout
            self.writeTimeout = writeTimeout
            self.maxBodyBytes = max(0, maxBodyBytes)
            self.answerTimeout = answerTimeout
        }
    }

    /// What happened to the listener's connections so far.
    public struct Counts: Sendable, Equatable {
        /// Connections open now.
        public var open = 0
        /// Of those, the ones being answered (their head read, their answer not yet sent whole).
        public var writing = 0
        /// Connections accepted (those from other machines on a loopback-only listener excluded).
        public var accepted = 0
        /// Answers the client took whole.
        public var answered = 0
        /// Connections closed to make room for a newer one.
        public var evicted = 0
        /// Connections whose request head did not arrive whole within ``Limits/headTimeout``.
        public var headTimeouts = 0
        /// Connections whose socket took no byte of the answer for ``Limits/writeStallTimeout``.
        public var stalledWrites = 0
        /// Connections that did not read their whole answer within ``Limits/writeTimeout``.
        public var writeTimeouts = 0
        /// Connections the client closed or reset before its answer was out.
        public var closedByClient = 0
        /// Requests an asynchronous handler did not answer within ``Limits/answerTimeout``.
        public var answerTimeouts = 0
        /// TLS connections whose handshake was not done within ``Limits/headTimeout`` (not
        /// counted in ``headTimeouts``).
        public var handshakeTimeouts = 0
        /// TLS connections whose handshake failed: a client speaking plain HTTP (told so in
        /// plain HTTP), or one that offers nothing the listener accepts.
        public var handshakeFailures = 0
    }

    /// How requests are answered: at once on the listener's thread, or by a task of their own.
    enum Responder: Sendable {
        case immediate(@Sendable (Request) -> Response)
        case deferred(@Sendable (Request) async -> Response)
    }

    public let address: ListenAddress
    /// The port actually bound (the configured one, or the kernel's choice for port 0 in tests).
    public let port: UInt16
    public let limits: Limits
    let socket: Int32
    let wake: (read: Int32, write: Int32)
    let responder: Responder
    /// Answers of asynchronous handlers, by connection serial, for the listener's thread to send.
    let mailbox = Mutex<[(serial: UInt64, response: Response)]>([])
    let stopped = Atomic(false)
    /// Whether connections from other machines are closed as soon as they are accepted.
    let loopbackOnly: Bool
    /// The certificate and key every connection's TLS handshake uses, on a TLS listener; `nil`: plain HTTP.
    public let tls: TLSContext?
    private let finished = Mutex<Bool>(false)
    let tally = Mutex(Counts())

    /// What happened to the connections so far (updated as the listener's thread goes).
    public var counts: Counts { tally.withLock { $0 } }

    /// Binds and listens at `address`; call ``start()`` to serve.
    ///
    /// - Parameters:
    ///   - loopbackOnly: close connections from other machines as soon as they are accepted.
    ///   - limits: the bounds clients are held to (the defaults unless a test shortens them).
    ///   - handler: answers a `GET` or `HEAD`; it runs on the listener's thread, so it must
    ///     answer from memory, at once.
    /// - Throws: ``ListenError`` in one sentence: the port in use, an address not on this
    ///   machine, no permission.
    public convenience init(address: ListenAddress, loopbackOnly: Bool = false, limits: Limits = Limits(), tls: TLSContext? = nil,
                            handler: @escaping @Sendable (_ request: Request) -> Response) throws(ListenError) {
        try self.init(address: address, loopbackOnly: loopbackOnly, limits: limits, responder: .immediate(handler), tls: tls)
    }

    /// Binds and listens at `address`, each request answered by `answer` in a task of its own
    /// (it may read a store), within ``Limits/answerTimeout``; the listener's thread keeps every
    /// other connection's deadlines meanwhile.
    ///
    /// - Parameter tls: the certificate and key to serve HTTPS with: every connection's
    ///   handshake is made within ``Limits/headTimeout``, inside the same connection cap.
    public convenience init(address: ListenAddress, loopbackOnly: Bool = false, limits: Limits = Limits(), tls: TLSContext? = nil,
                            answer: @escaping @Sendable (_ request: Request) async -> Response) throws(ListenError) {
        try self.init(address: address, loopbackOnly: loopbackOnly, limits: limits, responder: .deferred(answer), tls: tls)
    }

    init(address: ListenAddress, loopbackOnly: Bool, limits: Limits, responder: Responder, tls: TLSContext? = nil) throws(ListenError) {
        self.address = address
        self.tls = tls
        self.loopbackOnly = loopbackOnly
        self.limits = limits
        self.responder = responder
        let fd = Glibc.socket(address.isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw ListenError("cannot listen on \(address): \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let bound: Int32
        if address.isIPv6 {
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = address.port.bigEndian
            inet_pton(AF_INET6, address.host, &sin6.sin6_addr)
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &yes, socklen_t(MemoryLayout<Int32>.size))
            bound = withUnsafePointer(to: &sin6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        } else {
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = address.port.bigEndian
            inet_pton(AF_INET, address.host, &sin.sin_addr)
            bound = withUnsafePointer(to: &sin) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            let code = errno
            close(fd)
            throw ListenError(Self.reason(code, address))
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        port = withUnsafePointer(to: &storage) { pointer in
            address.isIPv6 ? pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
                           : pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else {
            close(fd)
            throw ListenError("cannot listen on \(address): \(String(cString: strerror(errno)))")
        }
        for end in pipeEnds { Self.configure(end) }
        socket = fd
        wake = (pipeEnds[0], pipeEnds[1])
    }

    /// Whether `address` can be bound now (`config check`), as the sentence a failure would be.
    public static func problem(binding address: ListenAddress) -> String? {
        do {
            let listener = try HTTPListener(address: address) { _ in Response(status: 404, body: "") }
            listener.closeDescriptors()
            return nil
        } catch {
            return error.description
        }
    }

    /// Non-blocking, and closed on exec.
    static func configure(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }

    /// Whether a peer's address is this machine's: 127.0.0.0/8, ::1, or ::ffff:127.x.
    static func isLoopback(_ peer: sockaddr_storage) -> Bool {
        var copy = peer
        let family = Int32(peer.ss_family)
        return withUnsafePointer(to: &copy) { pointer in
            switch family {
            case AF_INET:
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt32(bigEndian: $0.pointee.sin_addr.s_addr) >> 24 == 127 }
            case AF_INET6:
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    let bytes = withUnsafeBytes(of: address.pointee.sin6_addr) { Array($0) }
                    if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
                    return bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
                }
            default: return false
            }
        }
    }

    private static func reason(_ code: Int32, _ address: ListenAddress) -> String {
        switch code {
        case EADDRINUSE: return "cannot listen on \(address): the port is already in use (another feedsyncd, or another program)"
        case EADDRNOTAVAIL: return "cannot listen on \(address): no interface of this machine has that address"
        case EACCES: return "cannot listen on \(address): no permission (ports below 1024 need privileges)"
        default: return "cannot listen on \(address): \(String(cString: strerror(code)))"
        }
    }

    /// Serves on a thread of its own until ``stop()``.
    public func start() {
        let thread = Thread { [self] in
            serve()
            closeDescriptors()
        }
        thread.name = "feedsync listener"
        thread.start()
    }

    /// Stops serving and closes every connection.
    public func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        wakeUp()
    }

    /// Wakes the listener's thread (to stop, or to send an answer from the ``mailbox``); once
    /// its descriptors are closed, does nothing, so no byte goes to a number reused since.
    func wakeUp() {
        finished.withLock { done in
            guard !done else { return }
            var byte: UInt8 = 1
            _ = write(wake.write, &byte, 1)
        }
    }

    private func closeDescriptors() {
        finished.withLock { done in
            guard !done else { return }
            done = true
            close(socket)
            close(wake.read)
            close(wake.write)
        }
    }
}

/// Why the metrics listener cannot listen, in one sentence.
public struct ListenError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
