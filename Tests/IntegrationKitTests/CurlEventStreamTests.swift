import Core
import Foundation
import ProcessTestSupport
import IntegrationKit
import Testing

/// The curl transport's event streams against a real loopback server that misbehaves on purpose
/// (`Fixtures/sse/server.py`): every hostile case ends the stream with one error, never a hang.
@Suite(.serialized) final class CurlEventStreamTests {
    let server = Process()
    let stdin = makePipe()
    let stdout = makePipe()
    var port = 0

    init() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = ["python3", repository.appendingPathComponent("Fixtures/sse/server.py").path, "--port", "0", "--exit-on-stdin-eof"]
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
    static let shortHeaders = EventStreamLimits(idleTimeout: 60, headersDeadline: 2)
    static let shortIdle = EventStreamLimits(idleTimeout: 2, headersDeadline: 60)
    /// Elsewhere deadlines long enough that a busy machine never meets them by being slow.
    static let patient = EventStreamLimits(idleTimeout: 60, headersDeadline: 60)

    func stream(_ path: String, _ limits: EventStreamLimits = patient) -> EventStream {
        CurlTransport(limits: HTTPLimits()).eventStream(HTTPRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!), limits: limits)
    }

    /// Reads the stream to its end: what it delivered, and how it ended.
    func drain(_ stream: EventStream, slowly: Bool = false) async -> (opened: Bool, events: [ServerSentEvent], error: ServiceError?) {
        await Self.drain(stream, slowly: slowly)
    }

    static func drain(_ stream: EventStream, slowly: Bool = false) async -> (opened: Bool, events: [ServerSentEvent], error: ServiceError?) {
        var opened = false
        var events: [ServerSentEvent] = []
        do {
            for try await message in stream {
                switch message {
                case .opened: opened = true
                case .event(let event):
                    events.append(event)
                    if slowly { try await Task.sleep(for: .milliseconds(5)) }
                }
            }
            return (opened, events, nil)
        } catch {
            return (opened, events, error as? ServiceError)
        }
    }

    @Test func aBurstOfEventsArrivesWholeAndInOrder() async {
        let (opened, events, error) = await drain(stream("/events?n=5000"))
        #expect(opened && error == nil)
        #expect(events.map(\.data) == (0..<5000).map(String.init))
        #expect(events.allSatisfy { $0.type == "n" })
    }

    @Test func aServerThatNeverSendsHeadersIsLeftAtTheDeadline() async {
        let (opened, _, error) = await drain(stream("/silent", Self.shortHeaders))
        #expect(!opened)
        #expect(error?.code == .unavailable && error?.reason.contains("no answer header fields within 2 s") == true, "\(String(describing: error))")
    }

    @Test func aStreamThatGoesQuietIsLeftAfterTheIdleTimeout() async {
        let (opened, _, error) = await drain(stream("/quiet", Self.shortIdle))
        #expect(opened)
        #expect(error?.reason.contains("nothing arrived for 2 s (streamIdleSeconds)") == true, "\(String(describing: error))")
    }

    @Test func anEventOverTheCapEndsTheStream() async {
        let (_, events, error) = await drain(stream("/big"))
        #expect(events.isEmpty)
        #expect(error?.code == .contractViolation && error?.reason.contains("longer than 1048576 bytes") == true, "\(String(describing: error))")
    }

    @Test func endlessCommentsEndTheStream() async {
        let (_, _, error) = await drain(stream("/comments"))
        #expect(error?.reason.contains("more than 1048576 bytes without an event") == true, "\(String(describing: error))")
    }

    /// Field lines that dispatch nothing, sent as fast as the socket takes them, are cut at the
    /// bound between events, whatever field they carry.
    @Test(arguments: ["event", "id", "retry", "unknown", "nocolon", "blank", "mixed"])
    func endlessFieldLinesEndTheStreamAtTheBound(_ kind: String) async {
        var limits = EventStreamLimits(idleTimeout: 600, headersDeadline: 5)
        limits.maxBytesWithoutEvent = 64 << 10
        let (opened, events, error) = await drain(stream("/fields?kind=\(kind)", limits))
        #expect(opened && events.isEmpty)
        #expect(error?.code == .contractViolation && error?.reason.contains("more than 65536 bytes without an event") == true,
                "\(String(describing: error))")
    }

    /// Field lines trickled in keep bytes arriving, so libcurl's idle clock never fires; they are
    /// no sign of life, so the stream's own idle clock does.
    @Test(arguments: ["event", "blank"])
    func fieldLinesAloneDoNotKeepAStreamAlive(_ kind: String) async {
        // A line every 0.1 s, an idle timeout of 3 s: libcurl sees bytes all along. A stream that
        // kept going would be stopped by the test after a minute, and fail the expectations.
        let trickle = stream("/fields?kind=\(kind)&every=0.1", EventStreamLimits(idleTimeout: 3, headersDeadline: 5))
        typealias Drained = (opened: Bool, events: [ServerSentEvent], error: ServiceError?)
        let (opened, events, error) = await withTaskGroup(of: Drained?.self) { group -> Drained in
            group.addTask { await Self.drain(trickle) }
            group.addTask {
                try? await Task.sleep(for: .seconds(60))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? (false, [], nil)
        }
        #expect(opened && events.isEmpty)
        #expect(error?.code == .unavailable && error?.reason.contains("no event, data line or keep-alive comment arrived for 3 s") == true,
                "\(String(describing: error))")
    }

    @Test func aFloodFasterThanTheConsumerEndsTheStreamAtThePendingBound() async {
        var limits = Self.patient
        limits.maxPendingBytes = 32 << 10
        let (_, events, error) = await drain(stream("/flood", limits), slowly: true)
        #expect(error?.reason.contains("faster than they can be stored") == true, "\(String(describing: error))")
        #expect(events.count < 300, "at most the pending bound's worth is handed over")
    }

    @Test func chunkedEncodingGarbageEndsTheStream() async {
        let (_, events, error) = await drain(stream("/garbage"))
        #expect(events.map(\.data) == ["good"])
        #expect(error?.code == .invalidResponse, "\(String(describing: error))")
    }

    @Test func anAnswerThatIsNotAnEventStreamIsRefused() async {
        let (opened, _, error) = await drain(stream("/json"))
        #expect(!opened)
        #expect(error?.reason.contains("application/json, not text/event-stream") == true, "\(String(describing: error))")
    }

    @Test func aRedirectIsNotFollowedSoTheTokenStaysWithItsOrigin() async {
        let (opened, _, error) = await drain(stream("/redirect"))
        #expect(!opened)
        #expect(error?.code == .contractViolation && error?.reason.contains("302 to http://localhost:") == true, "\(String(describing: error))")
    }

    @Test func aRejectedTokenIsUnauthorizedWithTheServersMessage() async {
        let (_, _, error) = await drain(stream("/unauthorized"))
        #expect(error?.code == .unauthorized && error?.reason.contains("The access token is invalid") == true, "\(String(describing: error))")
    }
}
