@testable import App
import Core
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The metrics registry's exposition, and the listener on real loopback sockets.
@Suite struct MetricsTests {
    @Test(arguments: [
        ("127.0.0.1:9464", "127.0.0.1:9464"), ("localhost:80", "127.0.0.1:80"), ("[::1]:9464", "[::1]:9464"),
        ("0.0.0.0:9100", "0.0.0.0:9100"), ("[2001:db8::5]:1", "[2001:db8::5]:1"),
    ])
    func listenAddressesParse(_ text: String, _ expected: String) throws {
        #expect(try ListenAddress(text).description == expected)
    }

    @Test(arguments: ["9464", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:-1", "example.com:9464",
                      "::1:9464", "[::1]9464", "[::1", "127.0.0.1:９４", "256.0.0.1:9464", ""])
    func badListenAddressesAreRefused(_ text: String) {
        #expect(throws: ListenAddressError.self) { try ListenAddress(text) }
    }

    @Test func labelValuesAreEscapedAsTheFormatRequires() {
        #expect(Exposition.escapeLabel(#"a"b\c"# + "\nd") == #"a\"b\\c\nd"#)
        #expect(Exposition.escapeLabel("plain-é") == "plain-é")
        var out = Exposition()
        out.sample("x_total", [("host", "h\"\n")], 2)
        #expect(out.text == "x_total{host=\"h\\\"\\n\"} 2\n")
        #expect(Exposition.number(.infinity) == "+Inf" && Exposition.number(1.5) == "1.5" && Exposition.number(3) == "3")
    }

    @Test func histogramBucketsAreCumulativeAndCountsAddUp() {
        let metrics = MetricsRegistry(version: "t")
        metrics.setFeeds(["a"])
        for seconds in [0.01, 0.3, 0.3, 7, 2000] {
            metrics.syncStarted()
            metrics.syncFinished(feed: "a", succeeded: seconds < 1000, seconds: seconds, report: nil)
        }
        let text = metrics.renderedText()
        #expect(text.contains(#"feedsync_sync_duration_seconds_bucket{feed="a",le="0.05"} 1"#))
        #expect(text.contains(#"feedsync_sync_duration_seconds_bucket{feed="a",le="0.5"} 3"#))
        #expect(text.contains(#"feedsync_sync_duration_seconds_bucket{feed="a",le="10"} 4"#))
        #expect(text.contains(#"feedsync_sync_duration_seconds_bucket{feed="a",le="900"} 4"#))
        #expect(text.contains(#"feedsync_sync_duration_seconds_bucket{feed="a",le="+Inf"} 5"#))
        #expect(text.contains(#"feedsync_sync_duration_seconds_count{feed="a"} 5"#))
        #expect(text.contains(#"feedsync_syncs_total{feed="a",outcome="ok"} 4"#))
        #expect(text.contains(#"feedsync_syncs_total{feed="a",outcome="failed"} 1"#))
        #expect(text.contains(#"feedsync_consecutive_failures{feed="a"} 1"#))
        #expect(!text.contains("feedsync_leases_held"), "only a leasing store shows leases")
    }

    @Test func aDaemonWithoutAMetricsListenerKeepsNoFeedsNumbers() {
        let unseen = MetricsRegistry(version: "t")
        unseen.prepareFeeds(1, shown: false)
        let seen = MetricsRegistry(version: "t")
        seen.prepareFeeds(1, shown: true)
        for metrics in [unseen, seen] {
            metrics.syncStarted()
            metrics.syncFinished(feed: "a", succeeded: true, seconds: 0.3, report: SyncReport(feed: "a"))
        }
        // Shown only now, as a first refresh of /metrics would: the sync was kept by one of them only.
        for metrics in [unseen, seen] { metrics.setFeeds(["a"]) }
        #expect(unseen.renderedText().contains(#"feedsync_syncs_total{feed="a",outcome="ok"} 0"#))
        #expect(seen.renderedText().contains(#"feedsync_syncs_total{feed="a",outcome="ok"} 1"#))
        #expect(seen.renderedText().contains(#"feedsync_sync_duration_seconds_bucket{feed="a",le="0.5"} 1"#))
    }

    @Test func aLiveBatchAddsItsWritesAndSkippedItemsToTheSameCountersAsASync() {
        let metrics = MetricsRegistry(version: "t")
        metrics.setFeeds(["a"])
        var polled = SyncReport(feed: "a")
        (polled.newPosts, polled.updatedPosts, polled.deletedPosts, polled.skippedItems) = (5, 1, 0, 2)
        polled.filteredPosts = 4
        metrics.syncStarted()
        metrics.syncFinished(feed: "a", succeeded: true, seconds: 1, report: polled)
        var streamed = SyncReport(feed: "a")
        (streamed.newPosts, streamed.updatedPosts, streamed.deletedPosts, streamed.skippedItems) = (2, 0, 1, 1)
        streamed.filteredPosts = 3
        metrics.batchWritten(feed: "a", report: streamed)
        metrics.batchWritten(feed: "gone", report: streamed)

        let text = metrics.renderedText()
        #expect(text.contains(#"feedsync_posts_written_total{feed="a",op="insert"} 7"#))
        #expect(text.contains(#"feedsync_posts_written_total{feed="a",op="update"} 1"#))
        #expect(text.contains(#"feedsync_posts_written_total{feed="a",op="delete"} 1"#))
        #expect(text.contains(#"feedsync_items_skipped_total{feed="a"} 3"#))
        #expect(text.contains(#"feedsync_posts_filtered_total{feed="a"} 7"#), "polled and streamed posts the rules blocked")
        #expect(text.contains(#"feedsync_syncs_total{feed="a",outcome="ok"} 1"#), "a batch is no sync")
        #expect(!text.contains("gone"), "a feed no longer configured is not shown")
    }

    @Test func aCachedRenderingIsRenderedAgainAfterEveryChange() {
        let metrics = MetricsRegistry(version: "t")
        metrics.setFeeds(["a"])
        #expect(metrics.renderedText().contains(#"feedsync_syncs_total{feed="a",outcome="ok"} 0"#))
        metrics.syncStarted()
        metrics.syncFinished(feed: "a", succeeded: true, seconds: 1, report: nil)
        #expect(metrics.renderedText().contains(#"feedsync_syncs_total{feed="a",outcome="ok"} 1"#))
        metrics.update([FeedStatus(feed: "a", consecutiveFailures: 0, postCount: 7)])
        #expect(metrics.renderedText().contains(#"feedsync_posts{feed="a"} 7"#))
        metrics.requestFinished(host: "h", status: 304)
        #expect(metrics.renderedText().contains(#"feedsync_http_requests_total{host="h",code="304"} 1"#))
        metrics.setFeeds(["b"])
        let text = metrics.renderedText()
        #expect(!text.contains(#"feed="a""#) && text.contains(#"feedsync_syncs_total{feed="b",outcome="ok"} 0"#))
    }

    /// A registry of `count` feeds, each synced once with a post count, as a busy daemon's is.
    static func registry(feeds count: Int) -> MetricsRegistry {
        let metrics = MetricsRegistry(version: "t")
        let names = (0..<count).map { "feed-\($0)" }
        metrics.setFeeds(names)
        for name in names {
            metrics.syncStarted()
            metrics.syncFinished(feed: name, succeeded: true, seconds: 0.3, report: SyncReport(feed: name))
        }
        metrics.update(names.map { FeedStatus(feed: $0, consecutiveFailures: 0, postCount: 5) })
        return metrics
    }

    /// Every piece of a page, in order.
    static func pieces(of page: MetricsPage) -> [[UInt8]] {
        var pieces: [[UInt8]] = []
        while let piece = page.next() { pieces.append(piece) }
        return pieces
    }

    @Test func aPageOfTensOfThousandsOfFeedsIsMadeInPiecesAndNotKept() {
        // 25,000 feeds make about 45 MB, past what the registry keeps for the next scrape.
        let metrics = Self.registry(feeds: 25_000)
        let pieces = Self.pieces(of: metrics.render(process: ProcessStats()))
        let page = pieces.flatMap { $0 }
        #expect(page.count > MetricsRegistry.cachedBytes, "\(page.count) bytes")
        #expect(pieces.count > 100 && pieces.allSatisfy { $0.count <= MetricsPage.pieceBytes + 4096 }, "\(pieces.map(\.count).max() ?? 0)")
        #expect(metrics.rendered.withLock { $0 } == nil, "a page this large is not kept")

        // Each family once, with every feed's samples, whatever piece they fell in.
        let lines = String(decoding: page, as: UTF8.self).split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("# TYPE feedsync_syncs_total ") }.count == 1)
        #expect(lines.filter { $0.hasPrefix("# TYPE feedsync_sync_duration_seconds ") }.count == 1)
        #expect(lines.filter { $0.hasPrefix("feedsync_syncs_total{") && $0.hasSuffix(#"outcome="ok"} 1"#) }.count == 25_000)
        #expect(lines.filter { $0.hasPrefix("feedsync_sync_duration_seconds_bucket{") }.count == 25_000 * 14)
        #expect(lines.filter { $0.hasPrefix("feedsync_posts{") && $0.hasSuffix("} 5") }.count == 25_000)
        #expect(lines.suffix(4).first == "feedsync_webhook_deliveries_total{outcome=\"given_up\"} 0", "\(lines.suffix(4))")
        #expect(lines.last?.hasPrefix("process_start_time_seconds ") == true, "the process's own figures close the page")
    }

    @Test func aSmallPageIsKeptAndSentAgainByteForByteUntilSomethingChanges() {
        let metrics = Self.registry(feeds: 300)
        let first = metrics.render(process: ProcessStats()).joined()
        let kept = metrics.rendered.withLock { $0 }?.bytes ?? []
        #expect(kept.count > 400_000 && first.starts(with: kept), "all but the process's figures is kept")
        let again = Self.pieces(of: metrics.render(process: ProcessStats()))
        #expect(again.count == 2 && again[0] == kept && again.flatMap { $0 } == first, "sent again whole, as it was made")

        // A change while a page is being made: that page is not kept, and the next shows the change.
        let page = metrics.render(process: ProcessStats())
        _ = page.next()
        metrics.syncStarted()
        metrics.syncFinished(feed: "feed-7", succeeded: true, seconds: 0.3, report: nil)
        while page.next() != nil {}
        let after = String(decoding: metrics.render(process: ProcessStats()).joined(), as: UTF8.self)
        #expect(after.contains(#"feedsync_syncs_total{feed="feed-7",outcome="ok"} 2"#))
    }

    @Test func hostsPastTheCapAreCountedAsOther() {
        let metrics = MetricsRegistry(version: "t")
        for index in 0..<(MetricsRegistry.maxHosts + 5) { metrics.requestFinished(host: "h\(index)", status: 200) }
        metrics.requestFinished(host: "h0", status: nil)
        let text = metrics.renderedText()
        #expect(text.contains(#"feedsync_http_requests_total{host="other",code="200"} 5"#))
        #expect(text.contains(#"feedsync_http_requests_total{host="h0",code="error"} 1"#))
    }

    @Test func aStaleHealthIsUnhealthy() {
        let metrics = MetricsRegistry(version: "t")
        metrics.setHealth(ok: true, reason: "ok")
        #expect(metrics.health(staleAfter: 15).ok)
        #expect(!metrics.health(staleAfter: 15, now: Date().addingTimeInterval(60)).ok)
    }

    // MARK: The listener, on real sockets

    /// The head's deadline is not these tests' subject: 10 minutes, so a busy machine that reads a
    /// head already sent more than 5 s late does not cut it (HTTPListenerLimitTests test the deadline).
    func makeListener() throws -> HTTPListener {
        let limits = HTTPListener.Limits(headTimeout: .seconds(600))
        let listener = try HTTPListener(address: try ListenAddress("127.0.0.1:1").withPort(0), limits: limits) { request in
            request.path == "/metrics" ? .init(status: 200, body: "m 1\n") : .init(status: 404, body: "no\n")
        }
        listener.start()
        return listener
    }

    @Test func answersGetHeadAndRefusesOtherMethodsPathsAndGarbage() throws {
        let listener = try makeListener()
        defer { listener.stop() }
        #expect(try exchange(listener.port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").hasPrefix("HTTP/1.1 200 OK"))
        #expect(try exchange(listener.port, "GET /metrics?x=1 HTTP/1.0\n\n").hasSuffix("m 1\n"))
        let head = try exchange(listener.port, "HEAD /metrics HTTP/1.1\r\n\r\n")
        #expect(head.hasPrefix("HTTP/1.1 200") && head.hasSuffix("\r\n\r\n"))
        let post = try exchange(listener.port, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
        #expect(post.hasPrefix("HTTP/1.1 405") && post.contains("Allow: GET, HEAD"))
        #expect(try exchange(listener.port, "GET /other HTTP/1.1\r\n\r\n").hasPrefix("HTTP/1.1 404"))
        #expect(try exchange(listener.port, "\u{1}\u{2}garbage\r\n\r\n").hasPrefix("HTTP/1.1 400"))
        #expect(try exchange(listener.port, "GET /metrics\r\n\r\n").hasPrefix("HTTP/1.1 400"))
    }

    @Test func aOneMebibyteRequestLineIsRefused() throws {
        let listener = try makeListener()
        defer { listener.stop() }
        let answer = try exchange(listener.port, "GET /" + String(repeating: "a", count: 1 << 20) + " HTTP/1.1\r\n\r\n")
        #expect(answer.hasPrefix("HTTP/1.1 431"), "\(answer.prefix(80))")
    }

    @Test func aScrapeAnswersWhileHundredsOfIdleConnectionsAreOpen() throws {
        let listener = try makeListener()
        defer { listener.stop() }
        var idle: [Int32] = []
        defer { idle.forEach { close($0) } }
        for _ in 0..<300 {
            let fd = try connectTo(listener.port)
            _ = "GET /met".withCString { send(fd, $0, 8, Int32(MSG_NOSIGNAL)) }
            idle.append(fd)
        }
        let answer = try exchange(listener.port, "GET /metrics HTTP/1.1\r\n\r\n")
        #expect(answer.hasPrefix("HTTP/1.1 200"))
        // Let in by evicting the idlest connection, not by waiting out the idle ones' 5 s
        // (`requestTimeout`): the newest idle connection is still open.
        let newest = try #require(idle.last)
        var byte: UInt8 = 0
        #expect(recv(newest, &byte, 1, Int32(MSG_DONTWAIT)) == -1 && errno == EAGAIN, "the newest idle connection was closed")
    }

    @Test func aPortInUseIsOneSentence() throws {
        let listener = try makeListener()
        defer { listener.stop() }
        let taken = try ListenAddress("127.0.0.1:\(listener.port)")
        #expect(HTTPListener.problem(binding: taken)?.contains("already in use") == true)
    }
}


struct SocketError: Error {}

func connectTo(_ port: UInt16) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let result = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard fd >= 0, result == 0 else { throw SocketError() }
    return fd
}

/// Sends `request` and reads the whole answer, until the server closes.
/// The timeout only keeps a broken listener from hanging the test; it is no claim about speed.
func exchange(_ port: UInt16, _ request: String, timeout: Int = 120) throws -> String {
    let fd = try connectTo(port)
    defer { close(fd) }
    var time = timeval(tv_sec: timeout, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    let bytes = Array(request.utf8)
    var sent = 0
    while sent < bytes.count {
        let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
        if n <= 0 { break }  // the server may stop reading once it has answered
        sent += n
    }
    var answer = [UInt8]()
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 { break }
        answer += buffer[0..<n]
    }
    return String(decoding: answer, as: UTF8.self)
}

/// The login callback's listener takes this machine's connections only.
@Suite struct LoopbackPeerTests {
    static func peer(_ address: String, v6: Bool = false) -> sockaddr_storage {
        var storage = sockaddr_storage()
        withUnsafeMutablePointer(to: &storage) { pointer in
            if v6 {
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    $0.pointee.sin6_family = sa_family_t(AF_INET6)
                    _ = inet_pton(AF_INET6, address, &$0.pointee.sin6_addr)
                }
            } else {
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    $0.pointee.sin_family = sa_family_t(AF_INET)
                    _ = inet_pton(AF_INET, address, &$0.pointee.sin_addr)
                }
            }
        }
        return storage
    }

    @Test func loopbackPeersAreTaken() {
        #expect(HTTPListener.isLoopback(Self.peer("127.0.0.1")))
        #expect(HTTPListener.isLoopback(Self.peer("127.255.0.9")))
        #expect(HTTPListener.isLoopback(Self.peer("::1", v6: true)))
        #expect(HTTPListener.isLoopback(Self.peer("::ffff:127.0.0.1", v6: true)))
    }

    @Test func otherPeersAreNot() {
        #expect(!HTTPListener.isLoopback(Self.peer("10.0.0.1")))
        #expect(!HTTPListener.isLoopback(Self.peer("192.168.1.20")))
        #expect(!HTTPListener.isLoopback(Self.peer("0.0.0.0")))
        #expect(!HTTPListener.isLoopback(Self.peer("2001:db8::1", v6: true)))
        #expect(!HTTPListener.isLoopback(Self.peer("::ffff:10.0.0.1", v6: true)))
        #expect(!HTTPListener.isLoopback(sockaddr_storage()))
    }
}
