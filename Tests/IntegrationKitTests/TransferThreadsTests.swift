import Foundation
import Synchronization
import Testing
@testable import IntegrationKit

/// The threads transfers block on: kept for the next transfer, never a bound on how many run at once.
@Suite struct TransferThreadsTests {
    /// Runs `work` on `threads` and returns the kernel's id of the thread it ran on, once done.
    static func threadID(running threads: TransferThreads, _ work: @escaping @Sendable () -> Void = {}) async -> Int32 {
        await withCheckedContinuation { continuation in
            threads.run {
                work()
                // "/proc/thread-self" links to "PID/task/TID".
                let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
                continuation.resume(returning: Int32(link.split(separator: "/").last ?? "") ?? -1)
            }
        }
    }

    /// Whether `threads` comes to have `count` idle threads: a thread goes idle just after its
    /// work ends, and an idle thread ends after its lifetime. Waits while the count is short of
    /// `count` (above it, for 0), up to a minute.
    func idle(_ threads: TransferThreads, _ count: Int) async throws -> Bool {
        for _ in 0 ..< 6_000 where count == 0 ? threads.idleCount > 0 : threads.idleCount < count {
            try await Task.sleep(for: .milliseconds(10))
        }
        return threads.idleCount == count
    }

    @Test func workOneAfterAnotherRunsOnOneThread() async throws {
        let threads = TransferThreads(idleLifetime: .seconds(600))
        var seen: Set<Int32> = []
        for _ in 0 ..< 20 {
            seen.insert(await Self.threadID(running: threads))
            #expect(try await idle(threads, 1))
        }
        #expect(seen.count == 1, "\(seen)")
    }

    @Test func workThatBlocksNeverWaitsForOtherWork() async throws {
        let threads = TransferThreads(idleLifetime: .seconds(600))
        // Eight pieces of work that each wait for all eight to have started: they finish only if
        // each has a thread of its own at once.
        let barrier = Barrier(parties: 8)
        let ids = await withTaskGroup(of: Int32.self) { group in
            for _ in 0 ..< 8 {
                group.addTask { await Self.threadID(running: threads) { barrier.arrive() } }
            }
            return await group.reduce(into: Set<Int32>()) { $0.insert($1) }
        }
        #expect(ids.count == 8)
        #expect(barrier.met)
        #expect(try await idle(threads, 8))
        // And a ninth finds one of them idle.
        #expect(ids.contains(await Self.threadID(running: threads)))
    }

    @Test func anIdleThreadEndsAfterItsLifetimeAndTheNextWorkStartsAnother() async throws {
        let threads = TransferThreads(idleLifetime: .milliseconds(50))
        let first = await Self.threadID(running: threads)
        #expect(try await idle(threads, 0), "the idle thread ended")
        // It left the list just before its end: the kernel's record of it goes a moment later.
        var ended = false
        for _ in 0 ..< 6_000 {
            ended = !FileManager.default.fileExists(atPath: "/proc/self/task/\(first)")
            if ended { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(ended)
        let second = await Self.threadID(running: threads)
        #expect(second != first)
    }
}

/// Lets each of `parties` threads through once all have arrived (or after a minute: `met` says which).
private final class Barrier: Sendable {
    private let arrived = Mutex(0)
    private let open = DispatchSemaphore(value: 0)
    let parties: Int

    init(parties: Int) { self.parties = parties }

    var met: Bool { arrived.withLock { $0 } == parties }

    func arrive() {
        if arrived.withLock({ $0 += 1; return $0 }) == parties { for _ in 0 ..< parties { open.signal() } }
        _ = open.wait(timeout: .now() + 60)
    }
}
