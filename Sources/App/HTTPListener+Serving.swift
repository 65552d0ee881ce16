import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The listener's thread: one `poll` over every socket, the deadlines, and who gets a slot.
extension HTTPListener {
    /// One client's connection, from accept to close.
    struct Connection {
        let fd: Int32
        /// The order of arrival: the lowest is the oldest, the first to go when a new one needs a slot.
        let serial: UInt64
        /// Until when the head may arrive; once answering, until when the whole answer must be read.
        var deadline: ContinuousClock.Instant
        /// While answering: until when the socket must take another byte of the answer.
        var stallDeadline: ContinuousClock.Instant?
        var head: [UInt8] = []
        /// The client's address (``Request/peer``).
        var peer = ""
        /// A request whose head is read, while its body (of this many bytes) arrives.
        var pending: (request: Request, bodyLength: Int, bodyStart: Int)?
        /// Whether an asynchronous handler is answering it (until ``deadline``).
        var waiting = false
        /// The answer's pieces, the one being sent, and how much of it is sent.
        var out: [[UInt8]] = []
        var piece = 0
        var written = 0
        /// The rest of a streamed answer, asked for a piece at a time once `out` is sent.
        var stream: BodyStream?
        /// Whether the stream's pieces go as chunks.
        var chunked = false
        /// Its TLS session (`SSL *`), on a listener that serves TLS.
        var tls: OpaquePointer?
        /// What the TLS session waits for before its read or write can go on (`POLLIN` or
        /// `POLLOUT`), when not what the connection's state asks; 0 otherwise.
        var wants: Int16 = 0

        var answering: Bool { stallDeadline != nil }
        /// The nearest moment something must be checked.
        var nextDeadline: ContinuousClock.Instant { min(deadline, stallDeadline ?? deadline) }
    }

    /// How a connection ended, for ``Counts``.
    enum Ending {
        case answered, evicted, headTimeout, stalledWrite, writeTimeout, closedByClient, answerTimeout, stopped
        case handshakeTimeout, handshakeFailed, plainHTTP
    }

    func serve() {
        let clock = ContinuousClock()
        var connections: [Connection] = []
        var serial: UInt64 = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !stopped.load(ordering: .relaxed) {
            var polls = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            for connection in connections {
                let natural = connection.answering ? Int16(POLLOUT) : Int16(POLLIN)
                let events = connection.waiting ? 0 : connection.wants != 0 ? connection.wants : natural
                polls.append(pollfd(fd: connection.fd, events: events, revents: 0))
            }
            let nearest = connections.map(\.nextDeadline).min().map { $0 - clock.now } ?? .seconds(1)
            let ready = poll(&polls, nfds_t(polls.count), Self.milliseconds(nearest))
            if ready < 0 && errno != EINTR { break }
            if polls[1].revents != 0 {
                var drained = [UInt8](repeating: 0, count: 64)
                while read(wake.read, &drained, drained.count) > 0 {}
                if stopped.load(ordering: .relaxed) { break }
                deliverAnswers(to: &connections, now: clock.now)
            }

            // Existing connections first, so a slot freed now is free before accepting.
            var keep: [Connection] = []
            keep.reserveCapacity(connections.count)
            for (index, var connection) in connections.enumerated() {
                let events = polls[index + 2].revents
                var ending: Ending?
                if events & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && (events & Int16(POLLIN) == 0 || connection.waiting) {
                    ending = .closedByClient
                } else if connection.answering, events & Int16(POLLIN | POLLOUT) != 0 {
                    ending = flush(&connection)
                } else if !connection.answering, !connection.waiting, events & Int16(POLLIN | POLLOUT) != 0 {
                    ending = receive(&connection, into: &buffer, now: clock.now)
                }
                if ending == nil { ending = Self.overdue(connection, now: clock.now) }
                if let ending {
                    end(connection, ending)
                } else {
                    keep.append(connection)
                }
            }
            connections = keep

            if polls[0].revents & Int16(POLLIN) != 0 {
                accept(into: &connections, serial: &serial, now: clock.now)
            }
            let writing = connections.count { $0.answering }
            tally.withLock { counts in
                counts.open = connections.count
                counts.writing = writing
            }
        }
        for connection in connections { end(connection, .stopped) }
        tally.withLock { counts in
            counts.open = 0
            counts.writing = 0
        }
    }

    /// The deadline a connection has passed, if any.
    static func overdue(_ connection: Connection, now: ContinuousClock.Instant) -> Ending? {
        if connection.waiting { return now >= connection.deadline ? .answerTimeout : nil }
        guard connection.answering else {
            guard now >= connection.deadline else { return nil }
            return isHandshaking(connection) ? .handshakeTimeout : .headTimeout
        }
        if now >= connection.deadline { return .writeTimeout }
        if let stall = connection.stallDeadline, now >= stall { return .stalledWrite }
        return nil
    }

    /// `duration` as `poll`'s timeout: at least 1 ms past it (so the deadline has passed when
    /// poll returns), at most a second.
    static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        guard seconds < 1 else { return 1000 }
        guard seconds >= 0 && attoseconds >= 0 else { return 0 }
        return Int32(attoseconds / 1_000_000_000_000_000) + 1
    }

    /// Closes `connection` and counts how it ended.
    private func end(_ connection: Connection, _ ending: Ending) {
        switch ending {
        case .headTimeout, .answerTimeout:
            // A slow but honest client learns why; one try, never waiting for it to read.
            let response = ending == .headTimeout ? Response(status: 408, body: "the request head did not arrive in time\n")
                : Response(status: 503, body: "the answer took longer than \(limits.answerTimeout); try again\n")
            Self.sendOnce(connection, Self.encode(response).flatMap { $0 })
        case .plainHTTP:
            refusePlainHTTP(connection)
        case .evicted, .stalledWrite, .writeTimeout, .stopped, .handshakeTimeout:
            // A reset, not a FIN: what the client did not read is dropped now, rather than kept
            // by the kernel for a client that may never read it.
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(connection.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        case .answered, .closedByClient, .handshakeFailed:
            break
        }
        Self.freeSession(connection)
        close(connection.fd)
        tally.withLock { counts in
            switch ending {
            case .answered: counts.answered += 1
            case .evicted: counts.evicted += 1
            case .headTimeout: counts.headTimeouts += 1
            case .stalledWrite: counts.stalledWrites += 1
            case .writeTimeout: counts.writeTimeouts += 1
            case .closedByClient: counts.closedByClient += 1
            case .answerTimeout: counts.answerTimeouts += 1
            case .handshakeTimeout: counts.handshakeTimeouts += 1
            case .handshakeFailed, .plainHTTP: counts.handshakeFailures += 1
            case .stopped: break
            }
        }
    }

    /// Takes every waiting connection. Past the cap, the oldest open connection is closed,
    /// whatever it is doing, so the newest (a health check) always gets a slot.
    private func accept(into connections: inout [Connection], serial: inout UInt64, now: ContinuousClock.Instant) {
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
            tally.withLock { $0.accepted += 1 }
            // Connections stay in order of arrival, so the oldest is the first.
            if connections.count >= limits.maxConnections {
                end(connections.removeFirst(), .evicted)
            }
            serial += 1
            var connection = Connection(fd: fd, serial: serial, deadline: now + limits.headTimeout)
            connection.peer = Self.address(of: peer)
            if let tls {
                // The handshake is made by the first reads, within the head's deadline.
                guard let session = tls.connection(over: fd) else {
                    close(fd)
                    continue
                }
                connection.tls = session
            }
            connections.append(connection)
        }
    }

    /// Reads what arrived; answers once the head is complete. Returns how the connection ended, if it did.
    private func receive(_ connection: inout Connection, into buffer: inout [UInt8], now: ContinuousClock.Instant) -> Ending? {
        while true {
            switch receiveBytes(connection, into: &buffer) {
            case .closed: return .closedByClient
            case .handshakeFailed(let plainHTTP): return plainHTTP ? .plainHTTP : .handshakeFailed
            case .wait(let events):
                connection.wants = events == Int16(POLLIN) ? 0 : events
                return nil
            case .bytes(let count):
                connection.wants = 0
                connection.head.append(contentsOf: buffer[0..<count])
                if let ending = take(&connection, now: now) { return ending }
                // One read a poll on a plain socket; a TLS session is read on while it holds
                // bytes already taken from the socket, which poll would never announce.
                guard !connection.answering, !connection.waiting, Self.holdsBytes(connection) else { return nil }
            }
        }
    }

    /// Acts on the bytes read so far: answers a bad or oversized head, dispatches a whole request.
    private func take(_ connection: inout Connection, now: ContinuousClock.Instant) -> Ending? {
        if connection.pending == nil, let end = Self.endOfHead(connection.head) {
            guard end <= limits.maxHeadBytes else {
                answer(&connection, Response(status: 431, body: "request head over \(limits.maxHeadBytes) bytes\n"), now: now)
                return flush(&connection)
            }
            switch Self.parse(Array(connection.head[0..<end]), maxBodyBytes: limits.maxBodyBytes) {
            case .answer(let response): answer(&connection, response, now: now)
            case .request(var request, let bodyLength):
                request.peer = connection.peer
                connection.pending = (request, bodyLength, end)
            }
        } else if connection.pending == nil, connection.head.count > limits.maxHeadBytes {
            answer(&connection, Response(status: 431, body: "request head over \(limits.maxHeadBytes) bytes\n"), now: now)
        }
        if let pending = connection.pending, connection.head.count - pending.bodyStart >= pending.bodyLength {
            var request = pending.request
            request.body = Array(connection.head[pending.bodyStart..<(pending.bodyStart + pending.bodyLength)])
            connection.pending = nil
            dispatch(request, on: &connection, now: now)
        }
        return connection.answering ? flush(&connection) : nil
    }

    /// Answers a whole request: at once, or by a task whose answer comes back through the mailbox.
    private func dispatch(_ request: Request, on connection: inout Connection, now: ContinuousClock.Instant) {
        switch responder {
        case .immediate(let handler):
            answer(&connection, Self.finish(handler(request), for: request), now: now)
        case .deferred(let handler):
            connection.head = []
            connection.waiting = true
            connection.deadline = now + limits.answerTimeout
            let serial = connection.serial
            Task { [self] in
                let response = Self.finish(await handler(request), for: request)
                mailbox.withLock { $0.append((serial, response)) }
                wakeUp()
            }
        }
    }

    /// Hands each finished answer to its connection, if it is still open and waiting.
    private func deliverAnswers(to connections: inout [Connection], now: ContinuousClock.Instant) {
        let answers = mailbox.withLock { box in
            defer { box.removeAll() }
            return box
        }
        for (serial, response) in answers {
            guard let index = connections.firstIndex(where: { $0.serial == serial && $0.waiting }) else { continue }
            connections[index].waiting = false
            answer(&connections[index], response, now: now)
        }
    }

    /// A peer's address as text (`127.0.0.1`, `::1`), or `""` for another family.
    static func address(of peer: sockaddr_storage) -> String {
        var copy = peer
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let written: UnsafePointer<CChar>? = withUnsafePointer(to: &copy) { pointer in
            switch Int32(peer.ss_family) {
            case AF_INET:
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    var raw = address.pointee.sin_addr
                    return inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
                }
            case AF_INET6:
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var raw = address.pointee.sin6_addr
                    return inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
                }
            default: return nil
            }
        }
        guard written != nil, let end = text.firstIndex(of: 0) else { return "" }
        return String(decoding: text[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func answer(_ connection: inout Connection, _ response: Response, now: ContinuousClock.Instant) {
        connection.head = []
        connection.out = Self.encode(response).filter { !$0.isEmpty }
        connection.stream = response.stream
        connection.chunked = response.chunked
        connection.deadline = now + limits.writeTimeout
        connection.stallDeadline = now + limits.writeStallTimeout
    }

    /// Writes what the socket takes, at most ``piecesPerTurn`` pieces of a streamed body at a
    /// time, so one fast reader of a page made while it is sent (186 MB of `/metrics`) does not
    /// keep the loop from every other connection (`/healthz`) until its page ends. Every byte the
    /// socket takes moves the stall deadline on from the moment it was taken: a page whose
    /// pieces are slow to make (a starved machine) is not the client's stall.
    /// Returns `.answered` once all is sent, `nil` while bytes remain.
    private func flush(_ connection: inout Connection) -> Ending? {
        var made = 0
        while refill(&connection, made: &made) {
            let written = connection.written
            let transfer = connection.out[connection.piece].withUnsafeBytes { bytes in
                sendBytes(connection, UnsafeRawBufferPointer(rebasing: bytes[written...]))
            }
            let sent: Int
            switch transfer {
            case .bytes(let count): sent = count
            case .wait(let events):
                connection.wants = events == Int16(POLLOUT) ? 0 : events
                return nil
            case .closed, .handshakeFailed: return .closedByClient
            }
            connection.wants = 0
            connection.stallDeadline = ContinuousClock.now + limits.writeStallTimeout
            connection.written += sent
            if connection.written == connection.out[connection.piece].count {
                connection.out[connection.piece] = []
                connection.piece += 1
                connection.written = 0
            }
        }
        // This turn's pieces are sent and the stream has more: the next turn makes them.
        if connection.stream != nil { return nil }
        Self.notifyClose(connection)
        shutdown(connection.fd, Int32(SHUT_WR))
        return .answered
    }

    /// How many pieces of a streamed body one turn of the loop makes for one connection (2 MiB
    /// of `/metrics`' 256 KiB pieces).
    static let piecesPerTurn = 8

    /// Whether a piece is left to send now: once `out` is sent, the stream's next piece (framed),
    /// made only now that the socket has taken all before it, unless this turn made
    /// ``piecesPerTurn`` already (the loop comes back to it at once: the socket is writable).
    private func refill(_ connection: inout Connection, made: inout Int) -> Bool {
        while connection.piece == connection.out.count {
            guard let stream = connection.stream, made < Self.piecesPerTurn else { return false }
            made += 1
            let next = stream.next()
            if next == nil { connection.stream = nil }
            connection.out = Self.frame(next, chunked: connection.chunked).filter { !$0.isEmpty }
            connection.piece = 0
        }
        return true
    }
}
