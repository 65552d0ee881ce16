import Core
import Testing

/// The one hand-over between a live connection's reader and its consumer.
@Suite struct LiveQueueTests {
    func makeQueue(capacity: Int = 3) -> LiveQueue<Int> {
        LiveQueue(capacity: capacity, overflow: ServiceError(.contractViolation, "following home", "too many waiting"))
    }

    @Test func whatWaitsIsHandedOverAsOneBatchInOrderThenNilOnceFinished() async throws {
        let queue = makeQueue()
        try queue.push(1)
        try queue.push(2)
        #expect(try await queue.next() == [1, 2])
        try queue.push(3)
        queue.finish()
        #expect(try await queue.next() == [3], "the last batch still comes after finish")
        #expect(try await queue.next() == nil)
    }

    @Test func aWaitingConsumerGetsALoneItemAtOnce() async throws {
        let queue = makeQueue()
        let consumer = Task { try await queue.next() }
        try await Task.sleep(for: .milliseconds(50))
        try queue.push(7)
        #expect(try await consumer.value == [7])
    }

    @Test func pastCapacityThePushThrowsTheQueuesErrorAndCancellingEndsTheWait() async throws {
        let queue = makeQueue(capacity: 2)
        try queue.push(1)
        try queue.push(2)
        #expect(throws: ServiceError.self) { try queue.push(3) }
        #expect(try await queue.next() == [1, 2])

        let consumer = Task { try await queue.next() }
        try await Task.sleep(for: .milliseconds(50))
        consumer.cancel()
        await #expect(throws: CancellationError.self) { try await consumer.value }
    }
}
