import Core
import Foundation
import ProcessTestSupport
import IntegrationKit
import Testing

/// The curl transport's WebSocket client against a real loopback server (`Fixtures/bluesky/jetstream.py`,
/// its own RFC 6455 side), including the modes in which it misbehaves on purpose: every hostile
/// case ends the stream with one error, never a hang.
@Suite(.serialized) final class CurlWebSocketTests {
    let server = Process()
    let stdin = makePipe()
    let stdout = makePipe()
    var port = 0

    init() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = ["python3", repository.appendingPathComponent("Fixtures/bluesky/jetstream.py").path, "--port", "0",
                            "--exit-on-stdin-eof", "--ping-interval", "0.2"]
        let out = stdout
        server.standardOutput = out
        server.standardInput = stdin
        try launch(server)
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        port = Int(String(decoding: line, as: UTF8.self).split(separator: ":").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
    }

    /// Closing its standard input ends the server too (`--exit-on-stdin-eof`), whatever became
    /// of the signal.
    deinit {
        server.terminate()
        closeEnds(stdin, stdout)
    }

    /// The client's deadline under test short, so that it is met; the other one long, so that a
    /// busy machine never meets it by being slow to answer or to send.
    static let shortHandshake = WebSocketLimits(idleTimeout: 60, handshakeDeadline: 2)
    static let shortIdle = WebSocketLimits(idleTimeout: 2, handshakeDeadline: 60)
    /// Elsewhere deadlines long enough that a busy machine never meets them by being slow.
    static let patient = WebSocketLimits(idleTimeout: 60, handshakeDeadline: 60)

    func socket(_ path: String, _ limits: WebSocketLimits = patient) -> WebSocketStream {
        CurlTransport(limits: HTTPLimits()).webSocket(HTTPRequest(url: URL(string: "ws://127.0.0.1:\(port)\(path)")!), limits: limits)
    }

    func control(_ path: String, method: String = "POST") async throws -> [String: Any] {
        let response = try await CurlTransport(limits: HTTPLimits()).send(HTTPRequest(method: method, url: URL(string: "http://127.0.0.1:\(port)\(path)")!,
                                                                                      body: method == "POST" ? Data() : nil))
        return try JSONSerialization.jsonObject(with: response.body) as? [String: Any] ?? [:]
    }

    /// Reads the stream to its end (or `count` texts): what it delivered, and how it ended.
    static func drain(_ stream: WebSocketStream, count: Int = .max, slowly: Bool = false) async -> (opened: Bool, texts: [String], error: ServiceError?) {
        var opened = false
        var texts: [String] = []
        do {
            for try await event in stream {
                switch event {
                case .opened: opened = true
                case .text(let text):
                    texts.append(text)
                    if texts.count >= count { return (opened, texts, nil) }
                    if slowly { try await Task.sleep(for: .milliseconds(20)) }
                case .binary: break
                }
            }
            return (opened, texts, nil)
        } catch {
            return (opened, texts, error as? ServiceError)
        }
    }

    @Test func eventsArriveAndAnOptionsUpdateGoesOut() async throws {
        let stream = socket("/subscribe?requireHello=true")
        stream.send(#"{"type":"options_update","payload":{"wantedDids":["did:plc:ada00000000000000000000"]}}"#)
        let reader = Task { await CurlWebSocketTests.drain(stream, count: 1) }
        // The hello is what lets events through: wait until the server has it, then publish.
        let deadline = ContinuousClock.now + .seconds(600)
        while ContinuousClock.now < deadline {
            if let updates = try await control("/_jetstream/stats", method: "GET")["options_updates"] as? Int, updates > 0 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        _ = try await control("/_jetstream/post?did=did:plc:grace0000000000000000000")
        let published = try await control("/_jetstream/post?did=did:plc:ada00000000000000000000")
        let (opened, texts, error) = await reader.value
        #expect(opened && error == nil)
        let rkey = (published["uri"] as? String)?.split(separator: "/").last.map(String.init) ?? "?"
        #expect(texts.count == 1 && texts[0].contains(#""rkey":"\#(rkey)""#) && texts[0].contains("did:plc:ada"), "\(texts)")
    }

    @Test func serverPingsAreAnsweredAndKeepAQuietStreamOpen() async throws {
        // Idle timeout 2 s, and only pings (every 0.2 s) for 15 pongs, 3 s on the server's clock:
        // the stream stays open, and every ping gets its pong.
        let stream = socket("/subscribe?wantedDids=did:plc:nobody", Self.shortIdle)
        let reader = Task { await CurlWebSocketTests.drain(stream) }
        let deadline = ContinuousClock.now + .seconds(600)
        while try await control("/_jetstream/stats", method: "GET")["pongs"] as? Int ?? 0 < 15, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        reader.cancel()
        let (opened, _, error) = await reader.value
        #expect(opened && error == nil)
        var stats = try await control("/_jetstream/stats", method: "GET")
        // The close frame goes out within a tick of the cancellation; wait for the server to have it.
        while (stats["close_codes"] as? [Int])?.contains(1001) != true, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            stats = try await control("/_jetstream/stats", method: "GET")
        }
        #expect((stats["pongs"] as? Int ?? 0) >= 15)
        #expect((stats["close_codes"] as? [Int])?.contains(1001) == true, "a cancelled stream says goodbye: \(stats)")
    }

    @Test func fragmentsArePutTogetherAroundAPing() async {
        let (opened, texts, error) = await Self.drain(socket("/_hostile/fragments"))
        #expect(opened && texts == ["Hello"])
        #expect(error?.reason.contains("closed the connection (code 1000)") == true, "\(String(describing: error))")
    }

    @Test func aPingGetsAMaskedPongWithItsPayload() async {
        let (_, texts, _) = await Self.drain(socket("/_hostile/ping"))
        #expect(texts == [#"{"opcode":10,"payload":"are you there"}"#])
    }

    @Test func aServerCloseEndsTheStreamWithItsCode() async {
        let (opened, texts, error) = await Self.drain(socket("/_hostile/close"))
        #expect(opened && texts.isEmpty)
        #expect(error?.code == .unavailable && error?.reason.contains("code 4000: bye") == true, "\(String(describing: error))")
    }

    @Test(arguments: [
        ("/_hostile/oversized", ServiceError.Code.contractViolation, "longer than 1048576 bytes"),
        ("/_hostile/badopcode", .contractViolation, "reserved opcode 3"),
        ("/_hostile/masked", .contractViolation, "masked frame"),
        ("/_hostile/redirect", .contractViolation, "redirects (302) to http://elsewhere.example/subscribe"),
        ("/_hostile/badaccept", .contractViolation, "Sec-WebSocket-Accept does not match"),
        ("/_hostile/nohandshake", .unavailable, "did not complete the WebSocket handshake within 2 s"),
        ("/_hostile/quiet", .unavailable, "nothing arrived for 2 s"),
    ])
    func hostileServersEndTheStreamWithOneError(_ path: String, _ code: ServiceError.Code, _ reason: String) async {
        let limits = switch path {
        case "/_hostile/nohandshake": Self.shortHandshake
        case "/_hostile/quiet": Self.shortIdle
        default: Self.patient
        }
        let (_, texts, error) = await Self.drain(socket(path, limits))
        #expect(texts.isEmpty)
        #expect(error?.code == code && error?.reason.contains(reason) == true, "\(String(describing: error))")
    }

    /// A close frame the client must not echo is answered with 1002 (or 1007 for a reason that
    /// is not UTF-8), as RFC 6455 §7.4.1 and §8.1 say; a valid one is echoed.
    @Test(arguments: [
        ("03e7", 1002, ServiceError.Code.contractViolation, "close code 999"), ("03ed", 1002, .contractViolation, "close code 1005"),
        ("03ee", 1002, .contractViolation, "close code 1006"), ("03f7", 1002, .contractViolation, "close code 1015"),
        ("07d0", 1002, .contractViolation, "close code 2000"), ("1388", 1002, .contractViolation, "close code 5000"),
        ("03", 1002, .contractViolation, "close frame of one byte"), ("03e8c328", 1007, .contractViolation, "close reason is not UTF-8"),
        ("03f4", 1012, .unavailable, "closed the connection (code 1012)"), ("0fa0", 4000, .unavailable, "closed the connection (code 4000)"),
    ] as [(String, Int, ServiceError.Code, String)])
    func aServersCloseCodeIsAnsweredAsTheRFCSays(_ payload: String, _ answer: Int, _ code: ServiceError.Code, _ reason: String) async throws {
        let (opened, texts, error) = await Self.drain(socket("/_hostile/closepayload/\(payload)"))
        #expect(opened && texts.isEmpty)
        #expect(error?.code == code && error?.reason.contains(reason) == true, "\(String(describing: error))")
        var codes: [Int] = []
        for _ in 0..<200 {
            codes = try await control("/_jetstream/stats", method: "GET")["close_codes"] as? [Int] ?? []
            if !codes.isEmpty { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(codes == [answer])
    }

    @Test func aFloodFasterThanTheConsumerIsCut() async {
        let limits = WebSocketLimits(idleTimeout: 60, handshakeDeadline: 60, maxPendingBytes: 16 * 1024)
        let (opened, texts, error) = await Self.drain(socket("/_hostile/flood", limits), slowly: true)
        #expect(opened && texts.count < 2_000_000)
        #expect(error?.code == .contractViolation && error?.reason.contains("faster than they can be stored") == true, "\(String(describing: error))")
    }

    @Test func aRefusedUpgradeIsAnHTTPError() async throws {
        _ = try await control("/_jetstream/drop?refuse=5")
        let (opened, _, error) = await Self.drain(socket("/subscribe"))
        _ = try await control("/_jetstream/drop?refuse=0")
        #expect(!opened && error?.code == .unavailable && error?.reason.contains("503") == true, "\(String(describing: error))")
    }
}
