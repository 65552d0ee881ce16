@testable import App
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The listener's guarantees (see ``HTTPListener``), on real loopback sockets, held to the
/// listener's own deadlines (shortened here), never to a time the test measures: a client that
/// does not read, one that reads a byte now and then, one that dribbles its head, and a burst
/// past the cap. Each asserts what is answered, how each connection ended, and that every slot
/// is free again.
@Suite struct HTTPListenerLimitTests {
    /// 16 MiB, far more than a loopback socket's buffers hold, in pieces that share one array.
    static let bigBody = [[UInt8]](repeating: [UInt8](repeating: 0x61, count: 64 * 1024), count: 256)

    static func makeListener(_ limits: HTTPListener.Limits) throws -> HTTPListener {
        let listener = try HTTPListener(address: try ListenAddress("127.0.0.1:1").withPort(0), limits: limits) { request in
            switch request.path {
            case "/big": .init(status: 200, pieces: bigBody)
            case "/healthz": .init(status: 200, body: "ok\n")
            default: .init(status: 404, body: "no\n")
            }
        }
        listener.start()
        return listener
    }

    /// Waits until the listener's counts satisfy `condition`; `false` if they never do (a ceiling
    /// far above any deadline involved, so reaching it is a failure, not a timing).
    static func counts(of listener: HTTPListener, reach condition: (HTTPListener.Counts) -> Bool) async throws -> Bool {
        let ceiling = ContinuousClock.now + .seconds(600)
        while ContinuousClock.now < ceiling {
            if condition(listener.counts) { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    /// Opens a connection and sends `request` (if any), without reading.
    static func openClient(_ port: UInt16, sending request: String? = nil) throws -> Int32 {
        let fd = try connectTo(port)
        if let request { _ = request.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) } }
        return fd
    }

    /// Whether the server has ended the connection (a reset, or its end of the stream), waiting
    /// for it up to a long ceiling; what it sent before may still wait unread.
    static func isEnded(_ fd: Int32) -> Bool {
        let hangUp = Int16(POLLHUP | POLLERR | 0x2000)   // 0x2000: POLLRDHUP, the peer's FIN
        var descriptor = pollfd(fd: fd, events: hangUp, revents: 0)
        return poll(&descriptor, 1, 600_000) == 1 && descriptor.revents & hangUp != 0
    }

    /// Whether the connection is still open on the server's side, nothing from it waiting.
    static func isOpenAndQuiet(_ fd: Int32) -> Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
    }

    @Test func healthzIsAnsweredWhileEverySlotHoldsAClientThatDoesNotReadALargeAnswer() async throws {
        // The stall and write deadlines are far away: only eviction by age can free a slot.
        let listener = try Self.makeListener(.init(maxConnections: 6, headTimeout: .seconds(600), writeStallTimeout: .seconds(600), writeTimeout: .seconds(600)))
        defer { listener.stop() }
        let clients = try (0..<6).map { _ in try Self.openClient(listener.port, sending: "GET /big HTTP/1.1\r\n\r\n") }
        #expect(try await Self.counts(of: listener) { $0.writing == 6 }, "\(listener.counts)")

        let health = try exchange(listener.port, "GET /healthz HTTP/1.1\r\n\r\n", timeout: 60)
        #expect(health.hasPrefix("HTTP/1.1 200 OK") && health.hasSuffix("\r\n\r\nok\n"), "\(health.prefix(200))")
        #expect(try await Self.counts(of: listener) { $0.answered == 1 }, "\(listener.counts)")
        #expect(listener.counts.evicted == 1, "\(listener.counts)")
        // The oldest client that does not read lost its slot; the other five still hold theirs.
        #expect(listener.counts.writing == 5, "\(listener.counts)")
        #expect(Self.isEnded(clients[0]))

        // Closed with answer bytes unread, each sends a reset, and its slot is freed.
        clients.forEach { close($0) }
        #expect(try await Self.counts(of: listener) { $0.open == 0 }, "every slot is free once the clients go: \(listener.counts)")
        #expect(listener.counts.closedByClient == 5 && listener.counts.stalledWrites == 0 && listener.counts.writeTimeouts == 0, "\(listener.counts)")
    }

    @Test(arguments: [1, 4, 12])
    func clientsThatStopReadingAreCutAtTheStallDeadlineAndFreeTheirSlots(_ count: Int) async throws {
        let listener = try Self.makeListener(.init(maxConnections: 16, writeStallTimeout: .milliseconds(300), writeTimeout: .seconds(600)))
        defer { listener.stop() }
        let clients = try (0..<count).map { _ in try Self.openClient(listener.port, sending: "GET /big HTTP/1.1\r\n\r\n") }
        defer { clients.forEach { close($0) } }
        #expect(try await Self.counts(of: listener) { $0.stalledWrites == count && $0.open == 0 }, "\(listener.counts)")
        #expect(listener.counts.answered == 0 && listener.counts.writeTimeouts == 0 && listener.counts.evicted == 0, "\(listener.counts)")
        // Each was reset before it had the whole answer.
        for fd in clients {
            var received = 0
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if n <= 0 { break }
                received += n
            }
            #expect(received < 16 << 20)
        }
        let health = try exchange(listener.port, "GET /healthz HTTP/1.1\r\n\r\n", timeout: 60)
        #expect(health.hasPrefix("HTTP/1.1 200 OK"))
    }

    @Test(arguments: [10, 40])
    func aClientReadingOneByteEveryFewMillisecondsIsCutAtTheStallDeadline(_ milliseconds: Int) async throws {
        let listener = try Self.makeListener(.init(writeStallTimeout: .milliseconds(400), writeTimeout: .seconds(600)))
        defer { listener.stop() }
        let fd = try Self.openClient(listener.port, sending: "GET /big HTTP/1.1\r\n\r\n")
        defer { close(fd) }
        // Read a byte now and then until the listener has let the connection go (or a ceiling far
        // beyond its deadline): what the kernel holds for the client keeps it reading meanwhile.
        let ended = { (counts: HTTPListener.Counts) in counts.stalledWrites + counts.writeTimeouts + counts.answered + counts.closedByClient > 0 }
        var received = 0
        var byte: UInt8 = 0
        for _ in 0..<100_000 where !ended(listener.counts) {
            if recv(fd, &byte, 1, 0) == 1 { received += 1 }
            try await Task.sleep(for: .milliseconds(milliseconds))
        }
        #expect(listener.counts.stalledWrites == 1 && listener.counts.writeTimeouts == 0 && listener.counts.answered == 0, "\(listener.counts)")
        #expect(received > 0 && received < 16 << 20, "read \(received) bytes")
        #expect(try await Self.counts(of: listener) { $0.open == 0 })
        #expect(Self.isEnded(fd), "the connection was reset")
    }

    @Test(arguments: ["", "GET /healthz HTTP/1.1\r\n", "GET /heal"])
    func aHeadDribbledAByteAtATimeIsCutAtTheHeadDeadline(_ start: String) async throws {
        let listener = try Self.makeListener(.init(headTimeout: .milliseconds(500)))
        defer { listener.stop() }
        let fd = try Self.openClient(listener.port, sending: start.isEmpty ? nil : start)
        defer { close(fd) }
        var cut = false
        for _ in 0..<100_000 {
            if send(fd, "X", 1, Int32(MSG_NOSIGNAL)) < 0 { cut = true; break }
            var byte: UInt8 = 0
            let n = recv(fd, &byte, 1, Int32(MSG_DONTWAIT))
            if n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { cut = true; break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(cut)
        #expect(try await Self.counts(of: listener) { $0.headTimeouts == 1 && $0.open == 0 }, "\(listener.counts)")
        #expect(listener.counts.answered == 0)
    }

    @Test(arguments: [(4, 9), (8, 20), (16, 100)])
    func aBurstPastTheCapEvictsTheOldestAndHealthzStillGetsASlot(_ cap: Int, _ burst: Int) async throws {
        let listener = try Self.makeListener(.init(maxConnections: cap, headTimeout: .seconds(600)))
        defer { listener.stop() }
        var clients: [Int32] = []
        defer { clients.forEach { close($0) } }
        for _ in 0..<burst { clients.append(try Self.openClient(listener.port)) }
        #expect(try await Self.counts(of: listener) { $0.accepted == burst }, "\(listener.counts)")
        #expect(listener.counts.evicted == burst - cap && listener.counts.open == cap, "\(listener.counts)")
        // The oldest went, in order of arrival; the newest hold the slots.
        #expect(clients.prefix(burst - cap).allSatisfy(Self.isEnded))
        #expect(clients.suffix(cap).allSatisfy(Self.isOpenAndQuiet))

        let health = try exchange(listener.port, "GET /healthz HTTP/1.1\r\n\r\n", timeout: 60)
        #expect(health.hasPrefix("HTTP/1.1 200 OK"), "\(health.prefix(100))")
        #expect(try await Self.counts(of: listener) { $0.answered == 1 }, "\(listener.counts)")
        #expect(listener.counts.evicted == burst - cap + 1, "\(listener.counts)")
        #expect(Self.isEnded(clients[burst - cap]))

        clients.suffix(cap - 1).forEach { shutdown($0, Int32(SHUT_RDWR)) }
        #expect(try await Self.counts(of: listener) { $0.open == 0 }, "\(listener.counts)")
        #expect(listener.counts.closedByClient == cap - 1)
    }
}
