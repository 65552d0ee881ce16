import Core
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A small HTTP/1.1 listener of our own, for the daemon's `/metrics` and `/healthz` and for the
/// loopback callback of `feedsync login`: a slow or hostile client cannot knock it over, and it
/// never slows syncing.
///
/// One thread polls every socket; nothing here touches Swift's cooperative pool or the store.
/// Each connection gets ``requestTimeout`` to send its request head, at most ``maxHeadBytes``
/// of it, and one answer; then it is closed (no keep-alive). At most ``maxConnections`` are
/// open at once: a new one past that evicts the connection that has waited longest for its
/// head, so idle connections cannot lock a scraper out.
public final class HTTPListener: Sendable {
    public static let requestTimeout: TimeInterval = 5
    public static let maxHeadBytes = 8 * 1024
    public static let maxConnections = 64
    /// How long a client has to read an answer before the connection is dropped.
    public static let writeTimeout: TimeInterval = 10

    /// What a client asked for.
    public struct Request: Sendable {
        public var method: String
        /// The path, without the query.
        public var path: String
        /// The query, still percent-encoded, without the `?`.
        public var query: String
    }

    /// An answer: status, content type and body.
    public struct Response: Sendable {
        public var status: Int
        public var contentType = "text/plain; charset=utf-8"
        /// The body in pieces, sent one after the other (a large one is never copied whole).
        public var body: [[UInt8]]
        public var headers: [(String, String)] = []

        public init(status: Int, contentType: String = "text/plain; charset=utf-8", body: String, headers: [(String, String)] = []) {
            self.init(status: status, contentType: contentType, pieces: [Array(body.utf8)], headers: headers)
        }

        public init(status: Int, contentType: String = "text/plain; charset=utf-8", pieces: [[UInt8]], headers: [(String, String)] = []) {
            self.status = status
            self.contentType = contentType
            self.body = pieces
            self.headers = headers
        }

        var length: Int { body.reduce(0) { $0 + $1.count } }
    }

    public let address: ListenAddress
    /// The port actually bound (the configured one, or the kernel's choice for port 0 in tests).
    public let port: UInt16
    private let socket: Int32
    private let wake: (read: Int32, write: Int32)
    private let handler: @Sendable (_ request: Request) -> Response
    private let stopped = Atomic(false)
    /// Whether connections from other machines are closed as soon as they are accepted.
    private let loopbackOnly: Bool
    private let finished = Mutex<Bool>(false)

    /// Binds and listens at `address`; call ``start()`` to serve.
    ///
    /// - Parameter handler: answers a `GET` or `HEAD`.
    /// - Throws: ``ListenError`` in one sentence: the port in use, an address not on this
    ///   machine, no permission.
    public init(address: ListenAddress, loopbackOnly: Bool = false,
                handler: @escaping @Sendable (_ request: Request) -> Response) throws(ListenError) {
        self.address = address
        self.loopbackOnly = loopbackOnly
        self.handler = handler
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
    private static func configure(_ fd: Int32) {
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
        thread.name = "feedsync metrics"
        thread.start()
    }

    /// Stops serving and closes every connection.
    public func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
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

    private struct Connection {
        let fd: Int32
        let opened: Date
        var deadline: Date
        var head: [UInt8] = []
        /// The answer's pieces still to send, and how much of the first is sent.
        var out: [[UInt8]] = []
        var written = 0
        var answering = false
    }

    private func serve() {
        var connections: [Connection] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !stopped.load(ordering: .relaxed) {
            var polls = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            for connection in connections {
                polls.append(pollfd(fd: connection.fd, events: Int16(connection.answering ? POLLOUT : POLLIN), revents: 0))
            }
            let now = Date()
            let nearest = connections.map(\.deadline).min().map { max(0, $0.timeIntervalSince(now)) } ?? 1
            let timeout = Int32(min(1000, nearest * 1000 + 1))
            let ready = poll(&polls, nfds_t(polls.count), timeout)
            if ready < 0 && errno != EINTR { break }
            if polls[1].revents != 0 { break }

            // Existing connections first, so an evicted slot is free before accepting.
            var keep: [Connection] = []
            for (index, var connection) in connections.enumerated() {
                let events = polls[index + 2].revents
                var open = true
                if events & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && events & Int16(POLLIN) == 0 {
                    open = false
                } else if connection.answering, events & Int16(POLLOUT) != 0 {
                    open = flush(&connection)
                } else if !connection.answering, events & Int16(POLLIN) != 0 {
                    open = receive(&connection, into: &buffer)
                }
                if open && Date() > connection.deadline { open = false }
                if open { keep.append(connection) } else { close(connection.fd) }
            }
            connections = keep

            if polls[0].revents & Int16(POLLIN) != 0 {
                accept(into: &connections)
            }
        }
        for connection in connections { close(connection.fd) }
    }

    private func accept(into connections: inout [Connection]) {
        // Take every waiting connection; past the cap, drop the one waiting longest for its head.
        for _ in 0..<256 {
            var peer = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &peer) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(socket, $0, &length) } }
            guard fd >= 0 else { return }
            Self.configure(fd)
            if loopbackOnly && !Self.isLoopback(peer) {
                close(fd)
                continue
            }
            if connections.count >= Self.maxConnections {
                if let oldest = connections.indices.filter({ !connections[$0].answering }).min(by: { connections[$0].opened < connections[$1].opened }) {
                    close(connections[oldest].fd)
                    connections.remove(at: oldest)
                } else {
                    close(fd)
                    continue
                }
            }
            let now = Date()
            connections.append(Connection(fd: fd, opened: now, deadline: now.addingTimeInterval(Self.requestTimeout)))
        }
    }

    /// Reads what arrived; answers once the head is complete. Returns whether to keep the connection.
    private func receive(_ connection: inout Connection, into buffer: inout [UInt8]) -> Bool {
        let count = buffer.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, $0.count, 0) }
        if count == 0 { return false }
        if count < 0 { return errno == EAGAIN || errno == EINTR }
        connection.head.append(contentsOf: buffer[0..<count])
        if let end = Self.endOfHead(connection.head) {
            answer(&connection, Self.respond(to: Array(connection.head[0..<end]), handler: handler))
        } else if connection.head.count > Self.maxHeadBytes {
            answer(&connection, Response(status: 431, body: "request head over \(Self.maxHeadBytes) bytes\n"))
        }
        return connection.answering ? flush(&connection) : true
    }

    private func answer(_ connection: inout Connection, _ response: Response) {
        connection.out = Self.encode(response).filter { !$0.isEmpty }
        connection.answering = true
        connection.deadline = Date().addingTimeInterval(Self.writeTimeout)
    }

    /// Writes what it can; returns whether the connection still has bytes to send.
    private func flush(_ connection: inout Connection) -> Bool {
        while let piece = connection.out.first {
            let written = connection.written
            let sent = piece.withUnsafeBytes { bytes in
                send(connection.fd, bytes.baseAddress! + written, bytes.count - written, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 { return errno == EAGAIN || errno == EINTR }
            connection.written += sent
            if connection.written == piece.count {
                connection.out.removeFirst()
                connection.written = 0
            }
        }
        shutdown(connection.fd, Int32(SHUT_WR))
        return false
    }

    /// Where the head ends (after its blank line), if it has.
    static func endOfHead(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 2 else { return nil }
        for index in 1..<bytes.count where bytes[index] == 0x0A {
            if bytes[index - 1] == 0x0A { return index + 1 }
            if index >= 3, bytes[index - 1] == 0x0D, bytes[index - 2] == 0x0A { return index + 1 }
        }
        return nil
    }

    /// The answer to a complete head.
    static func respond(to head: [UInt8], handler: (Request) -> Response) -> Response {
        guard let lineEnd = head.firstIndex(of: 0x0A) else { return Response(status: 400, body: "bad request\n") }
        var line = head[0..<lineEnd]
        if line.last == 0x0D { line = line.dropLast() }
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0 > 0x20 && $0 < 0x7F } }),
              parts[2].starts(with: Array("HTTP/1.".utf8)), parts[1].first == UInt8(ascii: "/") || parts[1].elementsEqual("*".utf8) else {
            return Response(status: 400, body: "bad request\n")
        }
        let method = String(decoding: parts[0], as: UTF8.self)
        guard method == "GET" || method == "HEAD" else {
            return Response(status: 405, body: "only GET and HEAD\n", headers: [("Allow", "GET, HEAD")])
        }
        let target = String(decoding: parts[1], as: UTF8.self)
        let path = String(target.prefix { $0 != "?" })
        let query = target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) } ?? ""
        var response = handler(Request(method: method, path: path, query: query))
        if method == "HEAD" { response.headers.append(("Content-Length", "\(response.length)")); response.body = [] }
        return response
    }

    static func encode(_ response: Response) -> [[UInt8]] {
        let reasons = [200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
                       431: "Request Header Fields Too Large", 503: "Service Unavailable"]
        var head = "HTTP/1.1 \(response.status) \(reasons[response.status] ?? "Status")\r\n"
        head += "Content-Type: \(response.contentType)\r\n"
        if !response.headers.contains(where: { $0.0 == "Content-Length" }) { head += "Content-Length: \(response.length)\r\n" }
        for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
        head += "Connection: close\r\n\r\n"
        return [Array(head.utf8)] + response.body
    }
}

/// Why the metrics listener cannot listen, in one sentence.
public struct ListenError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
