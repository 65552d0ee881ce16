import Core
import IntegrationKit
import Synchronization
import Testing

/// A request made ahead answers only the next call for its key, soon after; anything else drops it.
@Suite(.timeLimit(.minutes(10))) struct ReadAheadTests {
    /// Fresh for an hour: on a machine busy with every other test, a task may wait its turn for
    /// long, and only ``anAnswerThatWaitedTooLongIsDropped()`` and
    /// ``anAnswerNobodyAsksForIsDroppedWhenItsWindowCloses()`` are about the window.
    static func readAhead() -> ReadAhead<String> { ReadAhead(freshFor: .seconds(3_600)) }

    /// Counts the fetches made and whether each was cancelled; a fetch waits for `release`.
    final class Fetches: Sendable {
        let started = Mutex(0)
        let cancelled = Mutex(0)
        let gate = AsyncGate()

        func fetch(_ answer: String) -> @Sendable () async throws -> String {
            { [self] in
                started.withLock { $0 += 1 }
                do {
                    try await gate.wait()
                } catch {
                    cancelled.withLock { $0 += 1 }
                    throw error
                }
                return answer
            }
        }
    }

    @Test func theNextCallForTheSameKeyTakesTheAnswerOnce() async throws {
        let ahead = Self.readAhead()
        let fetches = Fetches()
        await ahead.start("page 2", fetches.fetch("second page"))
        fetches.gate.open()
        #expect(try await ahead.answer(for: "page 2") == "second page")
        #expect(try await ahead.answer(for: "page 2") == nil, "taken once")
        #expect(fetches.started.withLock { $0 } == 1)
        #expect(await !ahead.isPending)
    }

    @Test func aCallForAnotherKeyDropsAndCancelsIt() async throws {
        let ahead = Self.readAhead()
        let fetches = Fetches()
        await ahead.start("page 2", fetches.fetch("second page"))
        #expect(try await ahead.answer(for: "page 7") == nil)
        #expect(await !ahead.isPending)
        #expect(try await ahead.answer(for: "page 2") == nil, "dropped, not kept for later")
        try await fetches.waitUntilCancelled(1)
    }

    @Test func anAnswerThatWaitedTooLongIsDropped() async throws {
        let ahead = ReadAhead<String>(freshFor: .zero)
        let fetches = Fetches()
        await ahead.start("page 2", fetches.fetch("second page"))
        fetches.gate.open()
        #expect(try await ahead.answer(for: "page 2") == nil)
    }

    @Test func anAnswerNobodyAsksForIsDroppedWhenItsWindowCloses() async throws {
        let ahead = ReadAhead<String>(freshFor: .milliseconds(10))
        let fetches = Fetches()
        await ahead.start("page 2", fetches.fetch("second page"))
        // No call comes (the walk failed): the request still on its way is cancelled, and
        // nothing is held for the feed's next sync.
        try await fetches.waitUntilCancelled(1)
        while await ahead.isPending { try await Task.sleep(for: .milliseconds(1)) }
        #expect(try await ahead.answer(for: "page 2") == nil)
    }

    @Test func startingAnotherDropsTheOneBefore() async throws {
        let ahead = Self.readAhead()
        let fetches = Fetches()
        await ahead.start("page 2", fetches.fetch("second page"))
        await ahead.start("page 3", fetches.fetch("third page"))
        try await fetches.waitUntilCancelled(1)
        fetches.gate.open()
        #expect(try await ahead.answer(for: "page 3") == "third page")
    }

    @Test func aFailedRequestFailsTheCallThatTakesIt() async throws {
        let ahead = Self.readAhead()
        await ahead.start("page 2") { throw ServiceError(.unavailable, "reading page 2", "the connection was refused") }
        await #expect(throws: ServiceError.self) { try await ahead.answer(for: "page 2") }
    }

    @Test func cancellingTheCallerCancelsTheRequest() async throws {
        let ahead = Self.readAhead()
        let fetches = Fetches()
        await ahead.start("page 2", fetches.fetch("second page"))
        let caller = Task { try await ahead.answer(for: "page 2") }
        try await fetches.waitUntilStarted(1)
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        #expect(fetches.cancelled.withLock { $0 } == 1)
    }
}

extension ReadAheadTests.Fetches {
    /// Waits until `count` fetches were cancelled: the program's own events, with no deadline.
    func waitUntilCancelled(_ count: Int) async throws {
        while cancelled.withLock({ $0 }) < count { try await Task.sleep(for: .milliseconds(1)) }
    }

    func waitUntilStarted(_ count: Int) async throws {
        while started.withLock({ $0 }) < count { try await Task.sleep(for: .milliseconds(1)) }
    }
}

/// A gate tasks wait at until it is opened; a waiting task that is cancelled throws.
final class AsyncGate: Sendable {
    private let isOpen = Atomic(false)

    func open() { isOpen.store(true, ordering: .releasing) }

    func wait() async throws {
        while !isOpen.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(1)) }
    }
}
