import Foundation
import Testing

/// At most a few end-to-end test cases run at once, however many `swift test` starts in parallel.
///
/// Each starts servers and daemons, holds their pipes and log files open, and waits on them.
/// Started all together (Swift Testing would start every one at once), they put some 150
/// Python servers on two cores and give the test process well over a thousand open
/// descriptors, and past about 1,360 Foundation's `Process.run()` crashes reading
/// `/proc/self/fd`. The budget keeps the suite parallel while bounding both: other tests
/// (unit tests) are not held by it.
///
///     @Suite(.endToEnd) struct PullEndToEndTests { … }
struct EndToEndBudget: SuiteTrait, TestTrait, TestScoping {
    /// How many end-to-end test cases run at once.
    static let width = min(16, max(4, 4 * ProcessInfo.processInfo.activeProcessorCount))
    static let slots = Slots(width)

    var isRecursive: Bool { true }

    /// One slot per test case (a parameterized test's cases each take their own), none for a suite.
    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        await Self.slots.acquire()
        do {
            try await function()
        } catch {
            await Self.slots.release()
            throw error
        }
        await Self.slots.release()
    }

    /// A counting semaphore that waits without holding a thread; waiters go in arrival order.
    actor Slots {
        private var free: Int
        private var waiting: [CheckedContinuation<Void, Never>] = []

        init(_ width: Int) { free = width }

        func acquire() async {
            if free > 0 {
                free -= 1
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        func release() {
            if waiting.isEmpty {
                free += 1
            } else {
                waiting.removeFirst().resume()
            }
        }
    }
}

extension Trait where Self == EndToEndBudget {
    /// Runs the suite's test cases within the budget of end-to-end tests that run at once.
    static var endToEnd: Self { EndToEndBudget() }
}
