@testable import feedsyncd
import Foundation
import Testing

/// The scheduler's plans: takeovers ahead of a backlog, never for ever; replaced plans dropped.
@Suite struct DueQueueTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aDueTakeoverGoesAheadOfEarlierOrdinaryFeeds() {
        var queue = DueQueue()
        for index in 0..<100 { queue.add(.init(at: now - 60, feed: "b\(index)", turn: 1), takeover: false) }
        queue.add(.init(at: now, feed: "t", turn: 1), takeover: true)
        queue.add(.init(at: now + 1, feed: "later", turn: 1), takeover: true)
        #expect(queue.popDue(at: now) { _ in true }?.feed == "t")
        // Not yet due: the backlog goes on in order.
        #expect(queue.popDue(at: now) { _ in true }?.feed == "b0")
        #expect(queue.earliest { _ in true } == now - 60)
    }

    @Test func takeoversGoFirstAtMostFourInARowWhileAnOrdinaryFeedWaits() {
        var queue = DueQueue()
        for index in 0..<3 { queue.add(.init(at: now - 10, feed: "b\(index)", turn: 1), takeover: false) }
        for index in 0..<10 { queue.add(.init(at: now - 1, feed: "t\(index)", turn: 1), takeover: true) }
        let order = (0..<13).compactMap { _ in queue.popDue(at: now) { _ in true }?.feed }
        #expect(order == ["t0", "t1", "t2", "t3", "b0", "t4", "t5", "t6", "t7", "b1", "t8", "t9", "b2"])
        #expect(queue.popDue(at: now) { _ in true } == nil)
    }

    @Test func tiesGoInTheOrderPlannedAndReplacedPlansAreDropped() {
        var queue = DueQueue()
        for name in ["c", "a", "b"] { queue.add(.init(at: now, feed: name, turn: 1), takeover: false) }
        // "a" planned again for later: its first plan no longer counts.
        queue.add(.init(at: now + 5, feed: "a", turn: 2), takeover: false)
        let current: (DueQueue.Entry) -> Bool = { $0.feed != "a" || $0.turn == 2 }
        #expect(queue.popDue(at: now, isCurrent: current)?.feed == "c")
        #expect(queue.popDue(at: now, isCurrent: current)?.feed == "b")
        #expect(queue.popDue(at: now, isCurrent: current) == nil)
        #expect(queue.earliest(isCurrent: current) == now + 5)
        queue.compact(isCurrent: current)
        #expect(queue.count == 1)
        #expect(queue.popDue(at: now + 5, isCurrent: current)?.feed == "a")
    }

    @Test func theEarliestOfManyPlansComesFirst() {
        var queue = DueQueue()
        // 500 distinct times, shuffled by a fixed step coprime to 1,000.
        let offsets = (0..<500).map { Double(($0 * 7_919) % 1_000) }
        for (index, offset) in offsets.enumerated() { queue.add(.init(at: now + offset, feed: "f\(index)", turn: 1), takeover: false) }
        let popped = (0..<500).compactMap { _ in queue.popDue(at: now + 1_000) { _ in true }?.at }
        #expect(popped == offsets.sorted().map { now + $0 })
    }
    /// The look ahead (``DueQueue/dueOrdinary(at:limit:isCurrent:)``) sees the next due ordinary
    /// plans in order and leaves every one in its place: ties keep their turn, takeovers stay out.
    @Test func theLookAheadSeesTheNextDueOrdinaryPlansAndLeavesThemInPlace() {
        var queue = DueQueue()
        for index in 0..<6 { queue.add(.init(at: now, feed: "f\(index)", turn: 1), takeover: false) }
        queue.add(.init(at: now - 1, feed: "t", turn: 1), takeover: true)
        queue.add(.init(at: now + 5, feed: "later", turn: 1), takeover: false)
        let current: (DueQueue.Entry) -> Bool = { $0.feed != "f1" }
        #expect(queue.dueOrdinary(at: now, limit: 3, isCurrent: current).map(\.feed) == ["f0", "f2", "f3"])
        #expect(queue.dueOrdinary(at: now, limit: 10, isCurrent: current).map(\.feed) == ["f0", "f2", "f3", "f4", "f5"])
        let order = (0..<7).compactMap { _ in queue.popDue(at: now, isCurrent: current)?.feed }
        #expect(order == ["t", "f0", "f2", "f3", "f4", "f5"])
        #expect(queue.earliest(isCurrent: current) == now + 5)
    }

    /// On a shared store each daemon takes the feeds in an order of its own, the same for the same
    /// instance id; on its own store, in the config's.
    @Test func theFirstRoundsOrderIsTheConfigsOrOneOfTheDaemonsOwn() throws {
        let feeds = (0..<4_000).map { "f\($0)" }
        #expect(StartOrder(seed: nil).order(feeds.count) { feeds[$0] }.map { feeds[$0] } == feeds)
        let first = StartOrder(seed: "host/101/1800000000000").order(feeds.count) { feeds[$0] }.map { feeds[$0] }
        #expect(first == StartOrder(seed: "host/101/1800000000000").order(feeds.count) { feeds[$0] }.map { feeds[$0] })
        #expect(first.sorted() == feeds.sorted() && first != feeds)
        #expect(first != StartOrder(seed: "host/102/1800000000000").order(feeds.count) { feeds[$0] }.map { feeds[$0] })
        // Neighbours in the config stay neighbours, in runs of StartOrder.block.
        let run = try #require(first.firstIndex(of: "f512"))
        #expect(Array(first[run...].prefix(StartOrder.block)) == Array(feeds[512 ..< 512 + StartOrder.block]))
    }
}
