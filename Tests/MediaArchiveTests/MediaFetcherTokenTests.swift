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
    static func startServer() throws -> (Process, Pipe, Pipe, [Int]) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/media/server.py")
        process.arguments = ["python3", script.path, "--port", "0", "--extra-ports", "1", "--exit-on-stdin-eof"]
        let input = makePipe(), output = makePipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try launch(process)
        var text = ""
        while text.split(separator: "\n").count < 2 {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let ports = text.split(separator: "\n").compactMap { $0.split(separator: ":").last.flatMap { Int($0) } }
        return (process, input, output, ports)
    }

    /// Every `Authorization` the server received, and `PORT PATH` of each request that had one.
    func authorizations(_ port: Int) throws -> (values: [String], requests: [String]) {
        let data = try Data(contentsOf: URL(string: "http://127.0.0.1:\(port)/_control/stats")!)
        let stats = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        return (stats["authorization"] as? [String] ?? [], stats["authorized"] as? [String] ?? [])
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
}
