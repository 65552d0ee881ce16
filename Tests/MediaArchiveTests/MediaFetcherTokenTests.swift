import Core
import Foundation
@testable import MediaArchive
import ProcessTestSupport
import Testing

/// The feed's token goes to the feed's own origin only: not to a media host on another port
/// (another origin), and not after a redirect away from the feed's server. Two ports of the media
/// fixture server are two origins; the server records every `Authorization` it receives.
@Suite struct MediaFetcherTokenTests {
    /// The fixture server's two ports, and its process.
    static func startServer(hosts: Int = 2) throws -> (Process, Pipe, Pipe, [Int]) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/media/server.py")
        process.arguments = ["python3", script.path, "--port", "0", "--extra-ports", "\(hosts - 1)", "--exit-on-stdin-eof"]
        let input = makePipe(), output = makePipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try launch(process)
        var text = ""
        while text.split(separator: "\n").count < hosts {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let ports = text.split(separator: "\n").compactMap { $0.split(separator: ":").last.flatMap { Int($0) } }
        return (process, input, output, ports)
    }

    /// Every `Authorization` the server received, `PORT PATH` of each request that had one, and
    /// the TCP connections each port accepted.
    func authorizations(_ port: Int) throws -> (values: [String], requests: [String], connections: [Int: Int]) {
        let data = try Data(contentsOf: URL(string: "http://127.0.0.1:\(port)/_control/stats")!)
        let stats = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        let connections = (stats["connectionsByPort"] as? [String: Int] ?? [:]).reduce(into: [Int: Int]()) { $0[Int($1.key) ?? 0] = $1.value }
        return (stats["authorization"] as? [String] ?? [], stats["authorized"] as? [String] ?? [], connections)
    }

    @Test func theTokenGoesToTheFeedsOriginOnlyAndNotAfterARedirectAway() async throws {
        let (process, input, output, ports) = try Self.startServer()
        defer {
            process.terminate()
            closeEnds(input, output)
        }
        try #require(ports.count == 2)
        let (home, other) = (ports[0], ports[1])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("archive-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let fetcher = try MediaFetcher(folder: folder, log: .disabled)
        let credential = MediaCredential(server: URL(string: "http://127.0.0.1:\(home)")!, token: Secret("feed-token-SECRET"))
        func item(_ port: Int, _ name: String) -> MediaItem { MediaItem(url: URL(string: "http://127.0.0.1:\(port)/m/\(name)")!, kind: .image) }

        #expect(await fetcher.fetch(item(home, "img-1.png"), limits: MediaLimits(), credential: credential).status == .fetched)
        #expect(await fetcher.fetch(item(other, "img-2.png"), limits: MediaLimits(), credential: credential).status == .fetched)
        #expect(await fetcher.fetch(item(home, "away-\(other).png"), limits: MediaLimits(), credential: credential).status == .fetched)
        await fetcher.close()
        let seen = try authorizations(home)
        #expect(seen.values == ["Bearer feed-token-SECRET", "Bearer feed-token-SECRET"])
        #expect(seen.requests == ["\(home) /m/img-1.png", "\(home) /m/away-\(other).png"],
                "img-1 and the redirect's first leg; neither the other host nor the redirect's target")
    }

    /// Requests that go round many hosts reuse one connection per host (each host's idle handle
    /// keeps it), and a reused connection carries only what its own request sends: the token on
    /// the feed's origin, none on a redirect's hop to another host over that host's open connection.
    @Test func requestsRoundManyHostsReuseOneConnectionEachAndTheTokenStaysPerRequest() async throws {
        let hosts = 6
        // One more port for the stats requests, so theirs are no fetch host's connections.
        let (process, input, output, all) = try Self.startServer(hosts: hosts + 1)
        defer {
            process.terminate()
            closeEnds(input, output)
        }
        try #require(all.count == hosts + 1)
        let ports = Array(all.prefix(hosts)), control = all[hosts]
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("archive-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let fetcher = try MediaFetcher(folder: folder, log: .disabled)
        let home = ports[0], other = ports[1]
        let credential = MediaCredential(server: URL(string: "http://127.0.0.1:\(home)")!, token: Secret("feed-token-SECRET"))
        var expected: [String] = []
        for round in 0..<4 {
            for (index, port) in ports.enumerated() {
                let name = "img-\(round * hosts + index).png"
                let url = URL(string: "http://127.0.0.1:\(port)/m/\(name)")!
                #expect(await fetcher.fetch(MediaItem(url: url, kind: .image), limits: MediaLimits(), credential: credential).status == .fetched)
                if port == home { expected.append("\(home) /m/\(name)") }
            }
            // Home's token on the first hop only; the second goes over the other host's open connection.
            let away = URL(string: "http://127.0.0.1:\(home)/m/away-\(other).png")!
            #expect(await fetcher.fetch(MediaItem(url: away, kind: .image), limits: MediaLimits(), credential: credential).status == .fetched)
            expected.append("\(home) /m/away-\(other).png")
        }
        let seen = try authorizations(control)
        await fetcher.close()
        // One connection a host: 4 requests to each, and 4 redirects' second hops to the other.
        #expect(ports.map { seen.connections[$0] ?? 0 } == Array(repeating: 1, count: hosts), "connections by port: \(seen.connections)")
        #expect(seen.requests == expected, "the token went with the home host's requests only")
        #expect(Set(seen.values) == ["Bearer feed-token-SECRET"])
    }
}
