import Foundation
import ProcessTestSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The repository this test file lives in.
let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The folder holding the built `feedsync` and `feedsyncd` (`swift test` builds them with the tests).
let binaries: URL = {
    if let folder = ProcessInfo.processInfo.environment["FEEDSYNC_BIN_DIR"] { return URL(fileURLWithPath: folder) }
    let runner = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).resolvingSymlinksInPath()
    for folder in [runner.deletingLastPathComponent(), runner.deletingLastPathComponent().deletingLastPathComponent()]
    where FileManager.default.isExecutableFile(atPath: folder.appendingPathComponent("feedsync").path) {
        return folder
    }
    return repository.appendingPathComponent(".build/debug")
}()

/// What a finished process left behind.
struct Finished {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs a program to completion, collecting its output.
///
/// Async all the way: the wait is a termination handler, not `waitUntilExit()`, which would
/// hold one of the few cooperative threads (and on Linux spins while it waits).
/// `input`, when given, is the process's standard input (a file, so not a terminal).
func run(_ executable: URL, _ arguments: [String], environment: [String: String] = [:], in folder: URL? = nil,
         input: String? = nil) async throws -> Finished {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    if let folder { process.currentDirectoryURL = folder }
    let out = makePipe(), err = makePipe()
    defer { closeEnds(out, err) }
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    var inputFile: URL?
    if let input {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-stdin-\(UUID().uuidString)")
        try Data(input.utf8).write(to: file)
        inputFile = file
        process.standardInput = try FileHandle(forReadingFrom: file)
    }
    defer { if let inputFile { try? FileManager.default.removeItem(at: inputFile) } }
    let output = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Data, Data), any Error>) in
        let collected = Collected()
        let group = DispatchGroup()
        group.enter()
        process.terminationHandler = { _ in group.leave() }
        do { try launch(process) } catch { continuation.resume(throwing: error); return }
        // Read both pipes while the process runs, so a full pipe never blocks it. Each read
        // blocks for the process's whole life, so it gets a thread of its own: on Linux the
        // global dispatch queue's threads are the ones Swift's tasks run on, and a suite of
        // reads parked there starves every other test of them.
        for (pipe, keep) in [(out, collected.setOut), (err, collected.setErr)] {
            group.enter()
            Thread.detachNewThread {
                keep(pipe.fileHandleForReading.readDataToEndOfFile())
                group.leave()
            }
        }
        group.notify(queue: .global()) { continuation.resume(returning: collected.both) }
    }
    return Finished(status: process.terminationStatus, stdout: String(decoding: output.0, as: UTF8.self),
                    stderr: String(decoding: output.1, as: UTF8.self))
}

/// Output gathered from two reader threads.
private final class Collected: Sendable {
    private let data = Mutex((Data(), Data()))
    func setOut(_ out: Data) { data.withLock { $0.0 = out } }
    func setErr(_ err: Data) { data.withLock { $0.1 = err } }
    var both: (Data, Data) { data.withLock { $0 } }
}

/// Runs `feedsync` with the given arguments.
func feedsync(_ arguments: [String], environment: [String: String] = ["FEEDSYNC_PASSWORD": "demo"], in folder: URL? = nil,
              input: String? = nil) async throws -> Finished {
    try await run(binaries.appendingPathComponent("feedsync"), arguments,
                  environment: environment.merging(["FEEDSYNC_TEST_SHORT_INTERVALS": "1"]) { given, _ in given }, in: folder, input: input)
}

/// Runs SQL with the sqlite3 command-line tool, as any other program reading the cache would.
func sqlite(_ database: URL, _ sql: String) async throws -> String {
    let result = try await run(URL(fileURLWithPath: "/usr/bin/env"), ["sqlite3", database.path, sql])
    guard result.status == 0 else { throw HarnessError("sqlite3 failed: \(result.stderr)") }
    return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A fresh temporary folder, removed when the test's value goes away.
final class Scratch {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    var database: URL { folder.appendingPathComponent("feedsync.sqlite") }
    /// The store's private sessions file: backend sessions and the reader accounts.
    var sessions: URL { folder.appendingPathComponent("feedsync.sqlite.sessions.sqlite") }

    /// Writes a config for one httpapi feed at `baseURL` and returns its path.
    func writeConfig(baseURL: String, pageSize: Int = 100, interval: String = "5m", extraFeeds: String = "",
                     daemon: String = "{}", feedKeys: String = "") throws -> String {
        let catalog = repository.appendingPathComponent("Fixtures/videos/catalog.json").path
        let json = """
            {"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
             "feeds": [{"name": "home", "interval": "\(interval)", \(feedKeys)
                        "posts": {"integration": "httpapi", "baseURL": "\(baseURL)", "username": "demo",
                                  "passwordEnv": "FEEDSYNC_PASSWORD", "pageSize": \(pageSize)},
                        "videos": {"integration": "mockvideohost", "catalog": "\(catalog)"}}\(extraFeeds)],
             "daemon": \(daemon)}
            """
        let url = folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: url)
        return url.path
    }
}

/// The reference API server, started as a real process on a free loopback port.
final class ReferenceServer {
    let process = Process()
    private let stdin = makePipe()
    private let stdout = makePipe()
    let port: Int

    convenience init(posts: Int, seed: Int = 1, pageSize: Int = 100, extra: [String] = []) throws {
        try self.init(script: "Fixtures/reference-api/server.py",
                      arguments: ["--posts", String(posts), "--seed", String(seed), "--page-size", String(pageSize)] + extra)
    }

    /// Starts any fixture server of this repository that speaks the `--port 0` convention, with
    /// `python` (found on the PATH unless it is a path).
    init(script: String, arguments: [String], python: String = "python3") throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [python, repository.appendingPathComponent(script).path, "--port", "0", "--exit-on-stdin-eof"] + arguments
        let out = stdout
        process.standardOutput = out
        // The server's stdin is a pipe only this process holds: if the test runner dies, the
        // server sees end of file and exits instead of lingering.
        process.standardInput = stdin
        process.standardError = FileHandle.nullDevice
        try launch(process)
        // The first line says where it listens: "listening on 127.0.0.1:PORT".
        var line = Data()
        let deadline = Date().addingTimeInterval(20)
        while !line.contains(UInt8(ascii: "\n")) && Date() < deadline {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let portText = text.split(separator: "\n").first?.split(separator: ":").last, let port = Int(portText) else {
            process.terminate()
            throw HarnessError("the reference server did not say where it listens: \(text)")
        }
        self.port = port
    }

    deinit {
        if process.isRunning { process.terminate() }
        closeEnds(stdin, stdout)
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Calls a control endpoint and returns its JSON.
    @discardableResult
    func control(_ method: String, _ target: String, body: String? = nil) async throws -> [String: Any] {
        var request = URLRequest(url: URL(string: baseURL + target)!)
        request.httpMethod = method
        request.httpBody = body.map { Data($0.utf8) }
        let (data, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw HarnessError("\(method) \(target) answered \((response as? HTTPURLResponse)?.statusCode ?? 0)")
        }
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }

    /// Every live post on the server as `id|text|edited_at`, sorted by id.
    func snapshot() async throws -> [String] {
        let posts = try await control("GET", "/_control/snapshot")["posts"] as? [[String: Any]] ?? []
        return posts.map { "\($0["id"] ?? "")|\($0["text"] ?? "")|\(($0["edited_at"] as? String) ?? "")" }.sorted()
    }

    /// Requests served per endpoint and status since the last reset.
    func stats() async throws -> (total: Int, byPath: [String: [String: Int]]) {
        let stats = try await control("GET", "/_control/stats")
        return (stats["total_requests"] as? Int ?? -1, stats["requests"] as? [String: [String: Int]] ?? [:])
    }
}

/// Every stored post as `id|text|edited_at` (edited_at as RFC 3339, like the server), sorted by id.
func storedPosts(_ database: URL) async throws -> [String] {
    let rows = try await sqlite(database, """
        SELECT id || '|' || text || '|' || COALESCE(strftime('%Y-%m-%dT%H:%M:%SZ', edited_at / 1000, 'unixepoch'), '')
        FROM posts ORDER BY id
        """)
    return rows.isEmpty ? [] : rows.components(separatedBy: "\n").sorted()
}

/// `feedsyncd` as a real process, its log lines collected in a file.
final class DaemonProcess {
    let process = Process()
    let logFile: URL

    /// - Parameter binary: `feedsyncd`, or `feedsync` with a command that runs until stopped (`serve`).
    init(config: String, in scratch: Scratch, environment: [String: String] = [:], arguments: [String] = [],
         binary: String = "feedsyncd") throws {
        logFile = scratch.folder.appendingPathComponent("feedsyncd-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        process.executableURL = binaries.appendingPathComponent(binary)
        process.arguments = arguments + ["--config", config]
        let defaults = ["FEEDSYNC_PASSWORD": "demo", "FEEDSYNC_TEST_SHORT_INTERVALS": "1"]
        process.environment = ProcessInfo.processInfo.environment.merging(defaults.merging(environment) { _, new in new }) { _, new in new }
        let log = try FileHandle(forWritingTo: logFile)
        _ = fcntl(log.fileDescriptor, F_SETFD, FD_CLOEXEC)
        process.standardError = log
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        defer { try? log.close() }   // the daemon has its own copy
        try launch(process)
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

    var pid: Int32 { process.processIdentifier }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Everything the daemon has logged so far.
    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// Whether it has exited, waiting up to `seconds` (by default ``patience``), checked without
    /// blocking a thread. How fast it exits is the daemon's own business: see ``stopsInTime()``.
    func exits(within seconds: Double = patience) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        return !process.isRunning
    }

    /// Whether it has exited 0 on its own graceful stop, before the stop deadline it enforces
    /// itself (6 s, docs/daemon.md's "exits 0 within 8 s"): its log says it did not pass the
    /// deadline. The daemon measures its own stop, so a loaded machine cannot fail this by
    /// being slow to run the test.
    func stopsInTime() async -> Bool {
        await exits() && process.terminationStatus == 0 && !log.contains("event=stop_deadline_passed")
    }

    /// CPU time the process has used so far, in clock ticks (user + system, from /proc).
    var cpuTicks: Int {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return -1 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, so utime (14) and stime (15) are at offsets 11 and 12.
        return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
    }

    /// How many times each of the daemon's threads has blocked so far (`voluntary_ctxt_switches`),
    /// by thread: a thread that wakes blocks again, so the growth between two readings counts its
    /// wake-ups. Unlike CPU ticks, which a busy machine's scheduler charges unevenly, the count
    /// does not depend on the load.
    var blockings: [String: Int] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return Dictionary(uniqueKeysWithValues: tasks.compactMap { thread in
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("voluntary_ctxt_switches:") }),
                  let count = line.split(separator: "\t").last.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) })
            else { return nil }
            return (thread, count)
        })
    }

    /// The wake-ups between two readings of ``blockings`` (a thread that ended meanwhile is not counted).
    static func wakeups(from before: [String: Int], to after: [String: Int]) -> Int {
        after.reduce(0) { sum, thread in sum + thread.value - (before[thread.key] ?? 0) }
    }
}

/// How long a test waits for something that must happen before it calls it a failure: long,
/// because a machine busy with other work is slow, and a wait that ends early costs nothing.
/// It is never a claim about speed; a test asserts counts, order, and the program's own
/// deadlines as the program reports them.
let patience: Double = 300

/// Polls `condition` every 100 ms until it holds or `seconds` (by default ``patience``) pass.
func eventually(within seconds: Double = patience, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if (try? await condition()) == true { return true }
        try await Task.sleep(for: .milliseconds(100))
    }
    return try await condition()
}

/// How many posts a feed has in the database (0 before the database exists).
func postCount(_ database: URL, feed: String = "home") async throws -> Int {
    guard FileManager.default.fileExists(atPath: database.path) else { return 0 }
    return Int(try await sqlite(database, "SELECT COUNT(*) FROM posts WHERE feed = '\(feed)'")) ?? -1
}

/// The tokens a store keeps in its private sessions file (`<database>.sessions.sqlite`), every account's.
func storedTokens(_ scratch: Scratch) async throws -> [String] {
    let rows = try await sqlite(URL(fileURLWithPath: scratch.database.path + ".sessions.sqlite"),
                                "SELECT access_token FROM sessions UNION ALL SELECT refresh_token FROM sessions WHERE refresh_token IS NOT NULL")
    return rows.split(separator: "\n").map(String.init)
}

/// The bytes of the database and its WAL, as a tool that copies or publishes them would see them.
func databaseBytes(_ scratch: Scratch) -> Data {
    [scratch.database.path, scratch.database.path + "-wal"].reduce(into: Data()) { all, path in
        all.append(FileManager.default.contents(atPath: path) ?? Data())
    }
}

extension Scratch {
    /// Writes a config for one Mastodon feed named `social` at `server` and returns its path.
    func writeMastodonConfig(server: String, postsKeys: String = "", name: String = "feedsync.json") throws -> String {
        let json = """
            {"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
             "feeds": [{"name": "social", "interval": "1h",
                        "posts": {"integration": "mastodon", "server": "\(server)", "accessTokenEnv": "MASTODON_TOKEN",
                                  "timeline": "home"\(postsKeys)}}]}
            """
        let url = folder.appendingPathComponent(name)
        try Data(json.utf8).write(to: url)
        return url.path
    }
}

/// The hostile fixture server (`Fixtures/hostile/server.py`) in one of its modes.
func hostileServer(_ mode: String, _ extra: [String] = []) throws -> ReferenceServer {
    try ReferenceServer(script: "Fixtures/hostile/server.py", arguments: ["--mode", mode] + extra)
}

extension ReferenceServer {
    /// The hostile server's `/_control/stats`: requests per "METHOD path", and every
    /// `Authorization` value it received.
    func hostileStats() async throws -> (requests: [String: Int], authorization: [String]) {
        let stats = try await control("GET", "/_control/stats")
        return (stats["requests"] as? [String: Int] ?? [:], stats["authorization"] as? [String] ?? [])
    }
}

/// Runs `feedsync` and measures its peak resident memory, in MiB, as the kernel counts it
/// for a child (through a small Python wrapper, so no other process of the suite is counted).
func feedsyncMeasuringMemory(_ arguments: [String], environment: [String: String]) async throws -> (Finished, Double) {
    let wrapper = """
        import resource, subprocess, sys
        status = subprocess.run(sys.argv[1:]).returncode
        sys.stderr.write("\\nmaxrss_kib=%d\\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        sys.exit(status)
        """
    var result = try await run(URL(fileURLWithPath: "/usr/bin/env"),
                               ["python3", "-c", wrapper, binaries.appendingPathComponent("feedsync").path] + arguments,
                               environment: environment.merging(["FEEDSYNC_TEST_SHORT_INTERVALS": "1"]) { given, _ in given })
    let marker = result.stderr.range(of: "\nmaxrss_kib=")
    let kib = marker.map { Double(result.stderr[$0.upperBound...].trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1 } ?? -1
    if let marker { result.stderr = String(result.stderr[..<marker.lowerBound]) }
    return (result, kib / 1024)
}

extension ReferenceServer {
    /// Has the reference server answer the next `pages` feed pages and hold every later one
    /// until ``release()``, so a client is certainly mid-sync at a known page, however fast or
    /// slow the machine.
    func hold(after pages: Int) async throws { try await control("POST", "/_control/hold?after=\(pages)") }

    /// How many feed requests the hold keeps waiting now.
    func held() async throws -> Int { try await control("GET", "/_control/hold")["held"] as? Int ?? -1 }

    /// Answers the held feed requests, and every later one at once.
    func release() async throws { try await control("POST", "/_control/release") }
}
