import Foundation

/// When each feed of the daemon is due, in one place: the scheduler's single timer sleeps until
/// the earliest, so a feed between syncs costs an entry here rather than a task of its own
/// (issue 40: 100,000 sleeping feed tasks were most of a daemon's memory).
///
/// Two lanes, each in order of due time: takeovers (feeds whose last claim found them held by
/// another daemon, looked at again once that lease runs out) go ahead of ordinary feeds, so a
/// daemon that died has its feeds taken over within one lease even when a backlog of due feeds
/// is waiting for the slots. A takeover claim only reads the lease, so they are few and short;
/// still, at most ``takeoversInARow`` go first while an ordinary feed is due, so a stream of them
/// cannot hold ordinary feeds back for ever.
///
/// An entry is a feed's plan at one ``Entry/turn``: a plan replaced later (a new turn) is left
/// in place and dropped when it comes up, as the caller's `isCurrent` says.
struct DueQueue {
    /// One plan: run `feed` at `at`.
    struct Entry {
        var at: Date
        var feed: String
        /// Which plan of the feed this is; only the feed's latest counts.
        var turn: UInt32
        /// Ties in time go in the order the plans were made (config order at the start).
        fileprivate var order: UInt64 = 0

        init(at: Date, feed: String, turn: UInt32) {
            self.at = at
            self.feed = feed
            self.turn = turn
        }
    }

    /// How many takeovers go first in a row while an ordinary feed is due.
    static let takeoversInARow = 4

    private var ordinary = Heap()
    private var takeovers = Heap()
    private var streak = 0
    private var made: UInt64 = 0

    /// Entries held, current or not.
    var count: Int { ordinary.count + takeovers.count }

    /// Plans a feed's next run, in the takeover lane or the ordinary one.
    mutating func add(_ entry: Entry, takeover: Bool) {
        var entry = entry
        made += 1
        entry.order = made
        if takeover { takeovers.push(entry) } else { ordinary.push(entry) }
    }

    /// When the next current plan is due, dropping replaced plans from the front; `nil` when none is.
    mutating func earliest(isCurrent: (Entry) -> Bool) -> Date? {
        ordinary.dropFront { !isCurrent($0) }
        takeovers.dropFront { !isCurrent($0) }
        switch (ordinary.first?.at, takeovers.first?.at) {
        case let (a?, b?): return min(a, b)
        case let (a, b): return a ?? b
        }
    }

    /// The feed to run next among those due at `now`: a takeover first (unless
    /// ``takeoversInARow`` just went while an ordinary feed waits), else the earliest ordinary.
    mutating func popDue(at now: Date, isCurrent: (Entry) -> Bool) -> Entry? {
        ordinary.dropFront { !isCurrent($0) }
        takeovers.dropFront { !isCurrent($0) }
        let ordinaryDue = ordinary.first.map { $0.at <= now } ?? false
        let takeoverDue = takeovers.first.map { $0.at <= now } ?? false
        if takeoverDue && (!ordinaryDue || streak < Self.takeoversInARow) {
            streak += 1
            return takeovers.pop()
        }
        guard ordinaryDue else { return nil }
        streak = 0
        return ordinary.pop()
    }

    /// Up to `limit` current ordinary plans due at `now`, earliest first, left in the queue: what
    /// the dispatcher asks the store about ahead of claiming (``Core/SyncedSinceCheck``).
    mutating func dueOrdinary(at now: Date, limit: Int, isCurrent: (Entry) -> Bool) -> [Entry] {
        var due: [Entry] = []
        while due.count < limit, let top = ordinary.first, top.at <= now, let entry = ordinary.pop() {
            if isCurrent(entry) { due.append(entry) }
        }
        // Put back with their own order, so ties keep their place.
        for entry in due { ordinary.push(entry) }
        return due
    }

    /// Drops every replaced plan (after many reloads or re-plans, so the heaps stay the size of the feeds).
    mutating func compact(isCurrent: (Entry) -> Bool) {
        ordinary.keep(where: isCurrent)
        takeovers.keep(where: isCurrent)
    }
}

/// A binary min-heap of plans by (time, order).
private struct Heap {
    private var items: [DueQueue.Entry] = []

    var count: Int { items.count }
    var first: DueQueue.Entry? { items.first }

    private static func before(_ a: DueQueue.Entry, _ b: DueQueue.Entry) -> Bool {
        a.at != b.at ? a.at < b.at : a.order < b.order
    }

    mutating func push(_ entry: DueQueue.Entry) {
        items.append(entry)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(items[child], items[parent]) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> DueQueue.Entry? {
        guard !items.isEmpty else { return nil }
        items.swapAt(0, items.count - 1)
        let top = items.removeLast()
        siftDown(from: 0)
        return top
    }

    mutating func dropFront(while stale: (DueQueue.Entry) -> Bool) {
        while let top = items.first, stale(top) { _ = pop() }
    }

    mutating func keep(where current: (DueQueue.Entry) -> Bool) {
        items.removeAll { !current($0) }
        for index in stride(from: items.count / 2 - 1, through: 0, by: -1) { siftDown(from: index) }
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var first = parent
            if left < items.count && Self.before(items[left], items[first]) { first = left }
            if right < items.count && Self.before(items[right], items[first]) { first = right }
            guard first != parent else { return }
            items.swapAt(parent, first)
            parent = first
        }
    }
}
