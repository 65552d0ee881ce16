@testable import App
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The listener's requests with bodies and its asynchronous handlers (what the reader listener
/// needs), on real loopback sockets, held to the listener's own limits and deadlines.
@Suite struct HTTPListenerBodyTests {
    /// A listener whose handler answers in a task: it echoes what it was asked, or (at `/slow`)
    /// waits for the test to let it go.
    /// The handler's and the head's deadlines where they are not the subject: a busy machine may
    /// take longer than the default 30 s to schedule the handler's task (the answer would be the
    /// deadline's 503), or than the default 5 s to read a head already sent (under a load of 29 a
    /// whole-suite run saw a connection cut that way, with no answer at all).
    static let patient: Duration = .seconds(600)

    static func makeListener(_ limits: HTTPListener.Limits, gate: Gate = Gate()) throws -> HTTPListener {
        let listener = try HTTPListener(address: try ListenAddress("127.0.0.1:1").withPort(0), limits: limits) { request in
            if request.path == "/slow" { await gate.wait() }
            let echo = "\(request.method) \(request.path)?\(request.query) from \(request.peer)\n"
                + "type=\(request.header("Content-Type") ?? "-") auth=\(request.header("authorization") ?? "-")\n"
                + String(decoding: request.body, as: UTF8.self)
            return .init(status: 200, body: echo)
        }
        listener.start()
        return listener
    }

    /// Lets the `/slow` handlers go once the test says so.
    final class Gate: Sendable {
        private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))
        func wait() async {
            await withCheckedContinuation { continuation in
                let go = state.withLock { state -> Bool in
                    if state.open { return true }
                    state.waiting.append(continuation)
                    return false
                }
                if go { continuation.resume() }
            }
        }
        /// How many handlers wait at the gate now.
        var waiting: Int { state.withLock { $0.waiting.count } }
        func open() {
            for waiting in state.withLock({ state in state.open = true; defer { state.waiting = [] }; return state.waiting }) { waiting.resume() }
        }
    }

    /// ``exchange(_:_:timeout:)`` on a thread of its own, so no cooperative thread blocks on a socket.
    static func ask(_ port: UInt16, _ request: String) async -> String {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: (try? exchange(port, request)) ?? "") }
        }
    }

    @Test func aPostsBodyHeadersAndPeerReachTheHandler() async throws {
        let listener = try Self.makeListener(.init(headTimeout: Self.patient, maxBodyBytes: 1_024, answerTimeout: Self.patient))
        defer { listener.stop() }
        let body = "T=abc&i=tag%3Agoogle.com"
        let answer = await Self.ask(listener.port, "POST /reader/api/0/edit-tag?client=x HTTP/1.1\r\nHost: h\r\n"
                                    + "Content-Type: application/x-www-form-urlencoded\r\nAuthorization: GoogleLogin auth=tok\r\n"
                                    + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
        #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(answer)")
        #expect(answer.hasSuffix("POST /reader/api/0/edit-tag?client=x from 127.0.0.1\n"
                                 + "type=application/x-www-form-urlencoded auth=GoogleLogin auth=tok\n\(body)"), "\(answer)")
        let get = await Self.ask(listener.port, "GET /x?q=1 HTTP/1.1\r\n\r\n")
        #expect(get.hasSuffix("GET /x?q=1 from 127.0.0.1\ntype=- auth=-\n"), "\(get)")
        let head = await Self.ask(listener.port, "HEAD /x HTTP/1.1\r\n\r\n")
        #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n") && head.hasSuffix("\r\n\r\n"), "a HEAD gets no body: \(head)")
    }

    @Test func aBodyOverTheLimitIs413AndNeverRead() async throws {
        let listener = try Self.makeListener(.init(headTimeout: Self.patient, maxBodyBytes: 100, answerTimeout: Self.patient))
        defer { listener.stop() }
        let answer = await Self.ask(listener.port, "POST /x HTTP/1.1\r\nContent-Length: 101\r\n\r\n")
        #expect(answer.hasPrefix("HTTP/1.1 413 Content Too Large\r\n") && answer.hasSuffix("request body over 100 bytes\n"), "\(answer)")
        let exactly = await Self.ask(listener.port, "POST /x HTTP/1.1\r\nContent-Length: 100\r\n\r\n" + String(repeating: "b", count: 100))
        #expect(exactly.hasPrefix("HTTP/1.1 200 OK\r\n") && exactly.hasSuffix(String(repeating: "b", count: 100)))
    }

    @Test(arguments: [
        ("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "411 Length Required"),
        ("POST /x HTTP/1.1\r\nContent-Length: ten\r\n\r\n", "400 Bad Request"),
        ("POST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n", "400 Bad Request"),
        ("POST /x HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", "400 Bad Request"),
        ("POST /x HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx", "400 Bad Request"),
        ("POST /x HTTP/1.1\r\n: no name\r\n\r\n", "400 Bad Request"),
        ("PUT /x HTTP/1.1\r\n\r\n", "405 Method Not Allowed"),
    ])
    func badRequestsGetTheirStatus(_ request: String, _ status: String) async throws {
        let listener = try Self.makeListener(.init(headTimeout: Self.patient, maxBodyBytes: 100, answerTimeout: Self.patient))
        defer { listener.stop() }
        let answer = await Self.ask(listener.port, request)
        #expect(answer.hasPrefix("HTTP/1.1 \(status)\r\n"), "\(answer)")
    }

    @Test func aListenerWithoutBodiesRefusesPost() async throws {
        let listener = try Self.makeListener(.init(headTimeout: Self.patient, answerTimeout: Self.patient))
        defer { listener.stop() }
        let answer = await Self.ask(listener.port, "POST /x HTTP/1.1\r\nContent-Length: 1\r\n\r\nx")
        #expect(answer.hasPrefix("HTTP/1.1 405 Method Not Allowed\r\n") && answer.contains("Allow: GET, HEAD\r\n"), "\(answer)")
    }

    /// A body that does not arrive in full is cut at the request's deadline, like a dribbled head.
    @Test func aBodyThatNeverArrivesIsCutAtTheHeadDeadline() async throws {
        let listener = try Self.makeListener(.init(headTimeout: .milliseconds(300), maxBodyBytes: 100))
        defer { listener.stop() }
        let answer = await Self.ask(listener.port, "POST /x HTTP/1.1\r\nContent-Length: 50\r\n\r\nonly part")
        #expect(answer.hasPrefix("HTTP/1.1 408 "), "\(answer)")
        #expect(try await HTTPListenerLimitTests.counts(of: listener) { $0.headTimeouts == 1 && $0.open == 0 })
    }

    /// A handler that is still working holds up no one: another request is answered meanwhile.
    @Test func aSlowHandlerHoldsUpNoOne() async throws {
        let gate = Gate()
        let listener = try Self.makeListener(.init(headTimeout: Self.patient, answerTimeout: Self.patient), gate: gate)
        defer { listener.stop(); gate.open() }
        async let slow = Self.ask(listener.port, "GET /slow HTTP/1.1\r\n\r\n")
        let ceiling = ContinuousClock.now + .seconds(600)
        while gate.waiting == 0, ContinuousClock.now < ceiling { try await Task.sleep(for: .milliseconds(10)) }
        #expect(gate.waiting == 1, "the /slow handler is at work")
        let fast = await Self.ask(listener.port, "GET /fast HTTP/1.1\r\n\r\n")
        #expect(fast.hasPrefix("HTTP/1.1 200 OK\r\n"), "answered while /slow waits: \(fast)")
        #expect(gate.waiting == 1, "and /slow still waits")
        gate.open()
        #expect(await slow.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(try await HTTPListenerLimitTests.counts(of: listener) { $0.open == 0 && $0.answered == 2 })
    }

    /// Past the answer deadline (the listener's own), the client gets 503.
    @Test func aHandlerPastTheAnswerDeadlineIsCutWith503() async throws {
        let gate = Gate()
        let listener = try Self.makeListener(.init(headTimeout: Self.patient, answerTimeout: .milliseconds(300)), gate: gate)
        defer { listener.stop(); gate.open() }
        let cut = await Self.ask(listener.port, "GET /slow HTTP/1.1\r\n\r\n")
        #expect(cut.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"), "\(cut)")
        #expect(try await HTTPListenerLimitTests.counts(of: listener) { $0.answerTimeouts == 1 && $0.open == 0 })
        // Opened only now, the late answer finds no connection waiting for it (a 300 ms deadline
        // would cut any other request of this listener on a loaded machine, so none is asked).
        gate.open()
    }
}
