import Core
import Foundation
import IntegrationKit
import Synchronization
import Testing

/// A wait for the quota inside `sendPaced` hands back the feed's sync slot and the host's
/// permit, so another feed syncs meanwhile; and feeds of one account share one pacer.
@Suite struct PacedWaitTests {
    let host = URL(string: "https://api.example.com/v1/feed")!
    let other = URL(string: "https://other.example.net/v1/feed")!

    @Test func aQuotaWaitGivesBackTheSyncSlotAndTheHostPermit() async throws {
        let slots = SyncSlots(limit: 1)
        let gate = HostGate(maxInFlightPerHost: 1)
        let transport = RecordingTransport()
        let sleeper = HeldSleep()
        let spent = RateLimitPacer()
        await spent.record(HTTPResponse(status: 200, headers: ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "600"]))
        let waiter = Waiter(slots: slots, feed: "limited", sleep: { seconds in try await sleeper.sleep(seconds) })

        // The limited feed takes the one slot and waits for its quota's reset, 10 minutes away: far
        // enough that a starved test process cannot reach the reset before it asks (at 60 s, one did
        // under a load of 19, sent at once and never waited).
        let limited = Task {
            try await slots.run(feed: "limited") {
                try await transport.sendPaced(HTTPRequest(url: host), gate: gate, pacer: spent, waiter: waiter,
                                              requests: RequestCounter(), operation: "reading")
            }
        }
        let waited = try #require(await sleeper.started())
        // Up to the reset, 600 s from the recorded answer, less what a loaded machine took since.
        #expect(waited > Waiter.moment && waited <= 600)
        #expect(await slots.inUse == 0, "the slot is handed back while it waits")
        #expect(await gate.inFlightCount(for: "api.example.com:443") == 0, "so is the host's permit")

        // Another feed, on the same host and on another, syncs in the meantime.
        for url in [host, other] {
            _ = try await slots.run(feed: "other") {
                try await transport.sendPaced(HTTPRequest(url: url), gate: gate, pacer: RateLimitPacer(),
                                              waiter: Waiter(slots: slots, feed: "other"), requests: RequestCounter(), operation: "reading")
            }
        }
        #expect(transport.sent == [host, other], "the limited feed's request is still waiting")

        sleeper.end()
        _ = try await limited.value
        #expect(transport.sent == [host, other, host])
        let (slotsInUse, permitsInUse) = (await slots.inUse, await gate.inFlightCount(for: "api.example.com:443"))
        #expect(slotsInUse == 0 && permitsInUse == 0, "every permit went back once")
    }

    @Test func aWaitOfAMomentKeepsItsPermits() async throws {
        let slots = SyncSlots(limit: 1)
        let observed = Mutex<Int?>(nil)
        try await slots.run(feed: "a") {
            try await Waiter(slots: slots, feed: "a", sleep: { _ in observed.withLock { $0 = 1 } }).wait(Waiter.moment / 2)
            #expect(await slots.inUse == 1)
        }
        #expect(observed.withLock { $0 } == 1)
    }

    @Test func aWaitOutsideASlotJustSleeps() async throws {
        let slots = SyncSlots(limit: 1)
        let slept = Mutex<[TimeInterval]>([])
        // `feedsync pull --feed x` of old, or a test: no slot held, none handed back.
        try await Waiter(slots: slots, feed: "a", sleep: { seconds in slept.withLock { $0.append(seconds) } }).wait(5)
        #expect(slept.withLock { $0 } == [5])
        #expect(await slots.inUse == 0)
    }

    @Test func feedsOfOneAccountOnOneServerShareOnePacer() async throws {
        let resources = SharedResources()
        let home = RateLimitPacer.shared(for: URL(string: "https://example.social/")!, account: "token 1", in: resources, log: .disabled)
        let list = RateLimitPacer.shared(for: URL(string: "https://EXAMPLE.social:443/api")!, account: "token 1", in: resources, log: .disabled)
        let otherAccount = RateLimitPacer.shared(for: URL(string: "https://example.social/")!, account: "token 2", in: resources, log: .disabled)
        let otherServer = RateLimitPacer.shared(for: URL(string: "https://example.org/")!, account: "token 1", in: resources, log: .disabled)
        #expect(home === list)
        #expect(home !== otherAccount && home !== otherServer)

        // What one feed's answer says holds the other feed back.
        let now = Date()
        await home.record(HTTPResponse(status: 200, headers: ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "30"]), now: now)
        #expect(try await list.turn("reading the list", now: now) == now.addingTimeInterval(30))
        #expect(try await otherAccount.turn("reading", now: now) == now)
    }

    @Test func sharedTurnsInTheLastTenthAreSpreadNotBunched() async throws {
        let now = Date()
        let pacer = RateLimitPacer()
        await pacer.record(HTTPResponse(status: 200, headers: ["X-RateLimit-Limit": "100", "X-RateLimit-Remaining": "4",
                                                               "X-RateLimit-Reset": "50"]), now: now)
        // Two feeds ask at the same moment: 50 s for 4 requests left, so turns 10 s apart.
        let first = try await pacer.turn("a", now: now).timeIntervalSince(now)
        let second = try await pacer.turn("b", now: now).timeIntervalSince(now)
        #expect(first == 10)
        #expect(second == 10 + 50.0 / 4)
    }
}

/// A transport that answers every request with an empty `200` and records the URLs it sent.
final class RecordingTransport: HTTPTransport {
    private let urls = Mutex<[URL]>([])
    var sent: [URL] { urls.withLock { $0 } }
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        urls.withLock { $0.append(request.url) }
        return HTTPResponse(status: 200)
    }
    func close() async {}
}

/// A sleep that lasts until the test ends it, and tells the test when it began and for how long.
final class HeldSleep: Sendable {
    private let state = Mutex<(seconds: TimeInterval?, ended: Bool)>((nil, false))

    func sleep(_ seconds: TimeInterval) async throws {
        state.withLock { $0.seconds = seconds }
        while !state.withLock({ $0.ended }) { try await Task.sleep(for: .milliseconds(5)) }
    }

    /// The length of the sleep once one has begun (waits for it up to 600 s: the whole suite's
    /// tasks share two threads on a busy machine, and the sleeper's turn may be long coming).
    func started() async -> TimeInterval? {
        let deadline = Date().addingTimeInterval(600)
        while Date() < deadline {
            if let seconds = state.withLock({ $0.seconds }) { return seconds }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return state.withLock { $0.seconds }
    }

    func end() { state.withLock { $0.ended = true } }
}
