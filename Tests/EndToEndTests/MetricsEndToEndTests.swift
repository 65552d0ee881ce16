import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// feedsyncd's `/metrics` and `/healthz` as a scraper sees them, against the reference server.
@Suite(.endToEnd) struct MetricsEndToEndTests {
    /// A loopback port free right now (the kernel's pick, released again).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func get(_ url: String) async throws -> Finished {
        try await run(URL(fileURLWithPath: "/usr/bin/env"), ["curl", "-s", "-i", "--max-time", "60", url])
    }

    /// The Prometheus client's reading of `text`, or `nil` (with one printed line) when the
    /// client cannot be installed here.
    static func parsedByPrometheusClient(_ text: String) async throws -> [String: Any]? {
        let venv = repository.appendingPathComponent(".build/metrics-venv")
        let python = venv.appendingPathComponent("bin/python").path
        if !FileManager.default.isExecutableFile(atPath: python) {
            let made = try await run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-m", "venv", venv.path])
            let installed = made.status == 0
                ? try await run(URL(fileURLWithPath: python), ["-m", "pip", "install", "-q", "prometheus-client"]) : made
            guard installed.status == 0 else {
                print("MetricsEndToEndTests: skipping the Prometheus client's parse: cannot install prometheus-client: \(installed.stderr.prefix(200))")
                return nil
            }
        }
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("metrics-\(UUID().uuidString).txt")
        try Data(text.utf8).write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }
        let parsed = try await run(URL(fileURLWithPath: "/bin/sh"),
                                   ["-c", "\"$0\" \"$1\" < \"$2\"", python, repository.appendingPathComponent("Fixtures/metrics/parse_metrics.py").path, input.path])
        #expect(parsed.status == 0, "the Prometheus client refused the exposition: \(parsed.stderr)")
        return try JSONSerialization.jsonObject(with: Data(parsed.stdout.utf8)) as? [String: Any]
    }

    @Test func aScrapeShowsSyncsRequestsAndPostsAndParsesWithThePrometheusClient() async throws {
        let server = try ReferenceServer(posts: 120)
        let scratch = try Scratch()
        let port = try Self.freePort()
        let config = try scratch.writeConfig(baseURL: server.baseURL, interval: "1h", extraFeeds: """
            , {"name": "café-ü", "interval": "1h",
               "posts": {"integration": "httpapi", "baseURL": "\(server.baseURL)", "username": "demo", "passwordEnv": "FEEDSYNC_PASSWORD"}}
            """)
        var json = try String(contentsOfFile: config, encoding: .utf8)
        json = String(json.dropLast()) + #", "metrics": {"listen": "127.0.0.1:\#(port)"}}"#
        try Data(json.utf8).write(to: URL(fileURLWithPath: config))
        let daemon = try DaemonProcess(config: config, in: scratch)
        defer { daemon.signal(SIGKILL) }

        var text = ""
        // The store's figures are read every 5 s; a scrape after that shows the synced posts.
        #expect(try await eventually {
            text = try await Self.get("http://127.0.0.1:\(port)/metrics").stdout
            return text.contains(#"feedsync_posts{feed="home"} 120"#) && text.contains(#"feedsync_posts{feed="café-ü"} 120"#)
        }, "\(text.prefix(2000))\n\(daemon.log)")
        #expect(text.contains("Content-Type: text/plain; version=0.0.4"))
        #expect(text.contains(#"feedsync_syncs_total{feed="home",outcome="ok"} 1"#))
        #expect(text.contains(#"feedsync_posts_written_total{feed="home",op="insert"} 120"#))
        #expect(text.contains(#"feedsync_http_requests_total{host="127.0.0.1",code="200"}"#))
        #expect(text.contains(#"feedsync_build_info{version=""#))
        #expect(text.contains("process_open_fds ") && text.contains("process_resident_memory_bytes "))

        let health = try await Self.get("http://127.0.0.1:\(port)/healthz").stdout
        #expect(health.hasPrefix("HTTP/1.1 200") && health.hasSuffix("\r\n\r\nok\n"), "\(health)")

        let body = String(text[text.range(of: "\r\n\r\n")!.upperBound...])
        if let families = try await Self.parsedByPrometheusClient(body) {
            let syncs = families["feedsync_syncs"] as? [String: Any]
            #expect(syncs?["type"] as? String == "counter")
            let durations = families["feedsync_sync_duration_seconds"] as? [String: Any]
            #expect(durations?["type"] as? String == "histogram")
            let posts = (families["feedsync_posts"] as? [String: Any])?["samples"] as? [[Any]]
            let feeds = Set(posts?.compactMap { ($0[1] as? [String: String])?["feed"] } ?? [])
            #expect(feeds == ["home", "café-ü"], "\(String(describing: posts))")
        }
    }

    @Test func aPortInUseIsAConfigErrorAndConfigCheckSaysSo() async throws {
        let scratch = try Scratch()
        let port = try Self.freePort()
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(holder) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(holder, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        listen(holder, 1)

        let config = try scratch.writeConfig(baseURL: "http://127.0.0.1:9", daemon: "{}")
        var json = try String(contentsOfFile: config, encoding: .utf8)
        json = String(json.dropLast()) + #", "metrics": {"listen": "127.0.0.1:\#(port)"}}"#
        try Data(json.utf8).write(to: URL(fileURLWithPath: config))

        let daemon = try await run(binaries.appendingPathComponent("feedsyncd"), ["--config", config],
                                   environment: ["FEEDSYNC_PASSWORD": "demo"])
        #expect(daemon.status == 78)
        #expect(daemon.stderr.contains("metrics.listen: cannot listen on 127.0.0.1:\(port): the port is already in use"), "\(daemon.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.database.path), "nothing was opened before the refusal")

        let check = try await feedsync(["config", "check", "--config", config])
        #expect(check.status == 0)
        #expect(check.stderr.contains("warning: metrics.listen: cannot listen on 127.0.0.1:\(port): the port is already in use"), "\(check.stderr)")

        json = json.replacingOccurrences(of: "127.0.0.1:\(port)", with: "db.example:9464")
        try Data(json.utf8).write(to: URL(fileURLWithPath: config))
        let bad = try await feedsync(["config", "check", "--config", config])
        #expect(bad.status == 78 && bad.stderr.contains("metrics.listen"), "\(bad.stderr)")
    }
}
