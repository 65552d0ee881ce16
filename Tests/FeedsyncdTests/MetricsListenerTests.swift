import App
import Core
@testable import feedsyncd
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's `/metrics` and `/healthz`, as `MetricsService` serves them, with thousands of
/// feeds so that `/metrics` is larger than a loopback socket holds: clients that ask for it and
/// never read cannot lock `/healthz` out. Deadlines are the listener's own, shortened here.
@Suite struct MetricsListenerTests {
    static let feeds = 8000

    /// A registry of ``feeds`` feeds, each with a sync and a post count, healthy.
    static func makeRegistry() -> MetricsRegistry {
        let registry = MetricsRegistry(version: "test")
        let names = (0..<feeds).map { "feed-\($0)" }
        registry.setFeeds(names)
        registry.update(names.map { FeedStatus(feed: $0, consecutiveFailures: 0, postCount: 100) })
        registry.setHealth(ok: true, reason: "ok")
        return registry
    }

    static func makeListener(_ registry: MetricsRegistry, _ limits: HTTPListener.Limits) throws -> HTTPListener {
        let listener = try HTTPListener(address: try ListenAddress("127.0.0.1:1").withPort(0), limits: limits, handler: MetricsService.handler(registry))
        listener.start()
        return listener
    }

    static func connect(_ port: UInt16, sending request: String) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        try #require(fd >= 0 && result == 0)
        _ = request.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        return fd
    }

    /// Asks for `path` and reads the whole answer (with a long ceiling, not a bound on the listener),
    /// as HTTP/1.0, whose streamed body comes whole until the close rather than in chunks.
    static func get(_ port: UInt16, _ path: String) throws -> String {
        let fd = try connect(port, sending: "GET \(path) HTTP/1.0\r\nHost: x\r\n\r\n")
        defer { close(fd) }
        var time = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var answer = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            answer += buffer[0..<n]
        }
        return String(decoding: answer, as: UTF8.self)
    }

    /// Whether the listener's counts come to hold `condition`, looked at every 10 ms for at least
    /// 10 minutes: only a listener that never gets there runs out (a busy machine took over 60 s).
    static func counts(of listener: HTTPListener, reach condition: (HTTPListener.Counts) -> Bool) async throws -> Bool {
        for _ in 0..<60_000 {
            if condition(listener.counts) { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    @Test func theMetricsPageOfThousandsOfFeedsIsMegabytes() {
        // More than a socket's buffers hold while nobody reads (an unread scrape is never
        // answered whole below), as 3,000 feeds or more already are.
        let size = Self.makeRegistry().render().joined().count
        #expect(size > 8 << 20, "\(size) bytes")
    }

    @Test(arguments: [1, 4, 16])
    func healthzAnswersWhileEverySlotHoldsAScrapeThatIsNotRead(_ slots: Int) async throws {
        // Nothing is cut by a deadline here: a slot is free only because the oldest goes.
        let registry = Self.makeRegistry()
        let listener = try Self.makeListener(registry, .init(maxConnections: slots, headTimeout: .seconds(600), writeStallTimeout: .seconds(600), writeTimeout: .seconds(600)))
        defer { listener.stop() }
        let scrapers = try (0..<slots).map { _ in try Self.connect(listener.port, sending: "GET /metrics HTTP/1.1\r\n\r\n") }
        #expect(try await Self.counts(of: listener) { $0.writing == slots }, "\(listener.counts)")

        for round in 1...3 {
            registry.setHealth(ok: true, reason: "ok")   // the daemon's heartbeat, however long the above took
            let health = try Self.get(listener.port, "/healthz")
            #expect(health.hasPrefix("HTTP/1.1 200 OK") && health.hasSuffix("\r\n\r\nok\n"), "\(health.prefix(200))")
            #expect(try await Self.counts(of: listener) { $0.answered == round }, "\(listener.counts)")
        }
        // The first health check took the oldest scrape's slot; it then left a slot free for the next ones.
        #expect(listener.counts.evicted == 1 && listener.counts.writing == slots - 1, "\(listener.counts)")
        scrapers.forEach { close($0) }
        #expect(try await Self.counts(of: listener) { $0.open == 0 }, "\(listener.counts)")
        // A scraper that reads gets the whole page.
        let page = try Self.get(listener.port, "/metrics")
        #expect(page.hasPrefix("HTTP/1.1 200 OK") && page.hasSuffix("\n") && page.contains(#"feedsync_posts{feed="feed-7999"} 100"#), "\(page.suffix(200))")
    }

    @Test(arguments: [1, 8, 32])
    func scrapesThatAreNotReadAreCutAtTheStallDeadlineAndFreeEverySlot(_ scrapes: Int) async throws {
        let registry = Self.makeRegistry()
        // The head's deadline is 10 minutes away: it is not the subject, and under a load of 19 one
        // of 32 heads already sent waited past the default 5 s for the listener to read it.
        let listener = try Self.makeListener(registry, .init(maxConnections: 64, headTimeout: .seconds(600),
                                                             writeStallTimeout: .milliseconds(300), writeTimeout: .seconds(600)))
        defer { listener.stop() }
        let scrapers = try (0..<scrapes).map { _ in try Self.connect(listener.port, sending: "GET /metrics HTTP/1.1\r\n\r\n") }
        defer { scrapers.forEach { close($0) } }
        #expect(try await Self.counts(of: listener) { $0.stalledWrites == scrapes && $0.open == 0 }, "\(listener.counts)")
        #expect(listener.counts.answered == 0 && listener.counts.evicted == 0 && listener.counts.writeTimeouts == 0, "\(listener.counts)")

        registry.setHealth(ok: true, reason: "ok")   // the daemon's heartbeat, however long the above took
        let health = try Self.get(listener.port, "/healthz")
        #expect(health.hasPrefix("HTTP/1.1 200 OK") && health.hasSuffix("\r\n\r\nok\n"), "\(health.prefix(200))")
    }
}
