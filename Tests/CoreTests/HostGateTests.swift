import Core
import Synchronization
import Testing

@Suite struct HostGateTests {
    @Test func noMoreThanTheLimitRunAtOncePerHostAndHostsAreIndependent() async throws {
        let gate = HostGate(maxInFlightPerHost: 2)
        let peak = Peak()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    try await gate.withPermit(for: "a") {
                        peak.enter()
                        try await Task.sleep(for: .milliseconds(5))
                        peak.leave()
                    }
                }
            }
            group.addTask {
                // Another host is not held up by "a" being full.
                try await gate.withPermit(for: "b") { #expect(await gate.inFlightCount(for: "b") == 1) }
            }
            try await group.waitForAll()
        }
        #expect(peak.highest == 2)
        #expect(await gate.inFlightCount(for: "a") == 0)
    }

    @Test func aThrowingBodyGivesItsPermitBack() async {
        let gate = HostGate(maxInFlightPerHost: 1)
        struct Boom: Error {}
        await #expect(throws: Boom.self) { try await gate.withPermit(for: "a") { throw Boom() } }
        #expect(await gate.inFlightCount(for: "a") == 0)
    }
}

extension HostGateTests {
    @Test func aWaiterThatIsCancelledLeavesWithoutAPermitAndTheQueueMovesOn() async throws {
        let gate = HostGate(maxInFlightPerHost: 1)
        let release = AsyncStream<Void>.makeStream()
        let holder = Task { try await gate.withPermit(for: "a") { for await _ in release.stream { break } } }
        while await gate.inFlightCount(for: "a") == 0 { await Task.yield() }

        let cancelled = Task { try await gate.withPermit(for: "a") { Issue.record("a cancelled waiter ran") } }
        let next = Task { try await gate.withPermit(for: "a") { "ran" } }
        try await Task.sleep(for: .milliseconds(20))
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }

        release.continuation.yield()
        try await holder.value
        #expect(try await next.value == "ran")
        #expect(await gate.inFlightCount(for: "a") == 0)
    }
}

/// The most bodies seen running at once.
final class Peak: Sendable {
    private let state = Mutex((now: 0, max: 0))
    func enter() { state.withLock { $0.now += 1; $0.max = max($0.max, $0.now) } }
    func leave() { state.withLock { $0.now -= 1 } }
    var highest: Int { state.withLock { $0.max } }
}
