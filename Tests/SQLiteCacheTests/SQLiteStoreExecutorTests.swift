import Core
import Foundation
import ProcessTestSupport
import SQLiteCache
import Testing

/// The SQLite store's blocking calls run on its own queue: a store waiting out another
/// process's write lock must not hold the threads every other task of the process runs on.
@Suite struct SQLiteStoreExecutorTests {
    @Test func storesWaitingOutAWriteLockDoNotStallOtherTasks() async throws {
        try await withScratchFolder("feedsync-executor") { folder in
            let path = folder.appendingPathComponent("cache.sqlite").path
            // More stores than the cooperative pool has threads, each with a long busy timeout: on
            // the pool they would occupy every thread until their timeout ran out.
            let busyTimeout: Int32 = 15_000
            var stores: [SQLiteFeedStore] = []
            for _ in 0...ProcessInfo.processInfo.activeProcessorCount {
                let store = SQLiteFeedStore(path: path, busyTimeoutMilliseconds: busyTimeout)
                try await store.open()
                stores.append(store)
            }
            let blocker = try WriteLockHolder(path: path)
            let writes = stores.enumerated().map { index, store in
                Task {
                    let page = FeedPage(changes: [.upsert(Post(id: PostID("p\(index)"), author: User(id: "u", handle: "u", displayName: "U"),
                                                               text: "x", createdAt: Date(timeIntervalSince1970: 1_700_000_000)))],
                                        nextCursor: FeedCursor(position: "\(index)"), hasMore: false)
                    return try await store.apply(page, videos: [], under: testLease("feed\(index)"))
                }
            }
            // This task needs a pool thread to wake up and let go of the lock. Stores that held the
            // pool's threads would first wait out their 15 s busy timeout and fail with "locked";
            // the pause only gives them time to start waiting.
            try await Task.sleep(for: .milliseconds(300))
            try blocker.release()
            for write in writes {
                #expect(try await write.value.inserted == 1, "every store committed once the lock was free")
            }
        }
    }
}

/// Another process holding the database's write lock (`BEGIN IMMEDIATE`) until released.
private final class WriteLockHolder {
    private let process = Process()
    private let input = makePipe(), output = makePipe()

    init(path: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("BEGIN IMMEDIATE")
            db.execute("CREATE TABLE IF NOT EXISTS held (x)")
            print("held", flush=True)
            sys.stdin.readline()
            db.execute("COMMIT")
            """, path]
        process.standardInput = input
        process.standardOutput = output
        try launch(process)
        // Held once it says so.
        let said = output.fileHandleForReading.availableData
        guard String(decoding: said, as: UTF8.self).hasPrefix("held") else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "the lock holder did not start"])
        }
    }

    func release() throws {
        try input.fileHandleForWriting.write(contentsOf: Data("go\n".utf8))
        process.waitUntilExit()
        closeEnds(input, output)
    }
}
