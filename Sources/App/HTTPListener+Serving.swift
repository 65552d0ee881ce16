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
        /// The answer's pieces, the one being sent, and how much of it is sent.
        var out: [[UInt8]] = []
        var piece = 0
        var written = 0

        var answering: Bool { stallDeadline != nil }
        /// The nearest moment something must be checked.
        var nextDeadline: ContinuousClock.Instant { min(deadline, stallDeadline ?? deadline) }
    }

    /// How a connection ended, for ``Counts``.
    enum Ending {
        case answered, evicted, headTimeout, stalledWrite, writeTimeout, closedByClient, stopped
    }

    func serve() {
        let clock = ContinuousClock()
        var connections: [Connection] = []
        var serial: UInt64 = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !stopped.load(ordering: .relaxed) {
            var polls = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            for connection in connections {
                polls.append(pollfd(fd: connection.fd, events: Int16(connection.answering ? POLLOUT : POLLIN), revents: 0))
            }
            let nearest = connections.map(\.nextDeadline).min().map { $0 - clock.now } ?? .seconds(1)
            let ready = poll(&polls, nfds_t(polls.count), Self.milliseconds(nearest))
            if ready < 0 && errno != EINTR { break }
            if polls[1].revents != 0 { break }

            // Existing connections first, so a slot freed now is free before accepting.
            var keep: [Connection] = []
            keep.reserveCapacity(connections.count)
            for (index, var connection) in connections.enumerated() {
                let events = polls[index + 2].revents
                var ending: Ending?
                if events & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && events & Int16(POLLIN) == 0 {
                    ending = .closedByClient
                } else if connection.answering, events & Int16(POLLOUT) != 0 {
                    ending = flush(&connection, now: clock.now)
                } else if !connection.answering, events & Int16(POLLIN) != 0 {
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
        guard connection.answering else { return now >= connection.deadline ? .headTimeout : nil }
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
        case .headTimeout:
            // A slow but honest client learns why; one try, never waiting for it to read.
            for piece in Self.encode(Response(status: 408, body: "the request head did not arrive in time\n")) {
                _ = piece.withUnsafeBytes { send(connection.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            }
        case .evicted, .stalledWrite, .writeTimeout, .stopped:
            // A reset, not a FIN: what the client did not read is dropped now, rather than kept
            // by the kernel for a client that may never read it.
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(connection.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        case .answered, .closedByClient:
            break
        }
        close(connection.fd)
        tally.withLock { counts in
            switch ending {
            case .answered: counts.answered += 1
            case .evicted: counts.evicted += 1
            case .headTimeout: counts.headTimeouts += 1
            case .stalledWrite: counts.stalledWrites += 1
            case .writeTimeout: counts.writeTimeouts += 1
            case .closedByClient: counts.closedByClient += 1
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
            connections.append(Connection(fd: fd, serial: serial, deadline: now + limits.headTimeout))
        }
    }

    /// Reads what arrived; answers once the head is complete. Returns how the connection ended, if it did.
    private func receive(_ connection: inout Connection, into buffer: inout [UInt8], now: ContinuousClock.Instant) -> Ending? {
        let count = buffer.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, $0.count, 0) }
        if count == 0 { return .closedByClient }
        if count < 0 { return errno == EAGAIN || errno == EINTR ? nil : .closedByClient }
        connection.head.append(contentsOf: buffer[0..<count])
        if let end = Self.endOfHead(connection.head) {
            answer(&connection, Self.respond(to: Array(connection.head[0..<end]), handler: handler), now: now)
        } else if connection.head.count > limits.maxHeadBytes {
            answer(&connection, Response(status: 431, body: "request head over \(limits.maxHeadBytes) bytes\n"), now: now)
        }
        return connection.answering ? flush(&connection, now: now) : nil
    }

    private func answer(_ connection: inout Connection, _ response: Response, now: ContinuousClock.Instant) {
        connection.head = []
        connection.out = Self.encode(response).filter { !$0.isEmpty }
        connection.deadline = now + limits.writeTimeout
        connection.stallDeadline = now + limits.writeStallTimeout
    }

    /// Writes what the socket takes; every byte it takes moves the stall deadline on.
    /// Returns `.answered` once all is sent, `nil` while bytes remain.
    private func flush(_ connection: inout Connection, now: ContinuousClock.Instant) -> Ending? {
        while connection.piece < connection.out.count {
            let written = connection.written
            let sent = connection.out[connection.piece].withUnsafeBytes { bytes in
                send(connection.fd, bytes.baseAddress! + written, bytes.count - written, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 { return errno == EAGAIN || errno == EINTR ? nil : .closedByClient }
            connection.stallDeadline = now + limits.writeStallTimeout
            connection.written += sent
            if connection.written == connection.out[connection.piece].count {
                connection.out[connection.piece] = []
                connection.piece += 1
                connection.written = 0
            }
        }
        shutdown(connection.fd, Int32(SHUT_WR))
        return .answered
    }
}
