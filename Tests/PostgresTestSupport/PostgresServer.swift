import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL server of the tests' own: `initdb` into a temporary folder, then `pg_ctl` on a
/// Unix socket in that folder, with no TCP. PostgreSQL refuses to run as root, so as root the
/// server runs as the unprivileged `postgres` user, which owns the folder.
///
/// Started once per test process, on first use; a watcher stops it and removes the folder
/// when the process ends, however it ends.
public enum PostgresServer {
    /// The server's programs: `$PG_BINDIR`, else the newest `/usr/lib/postgresql/<version>/bin` (Debian's layout).
    static let binaries: String = {
        if let folder = ProcessInfo.processInfo.environment["PG_BINDIR"] { return folder }
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        let newest = versions.compactMap(Int.init).max()
        return newest.map { "/usr/lib/postgresql/\($0)/bin" } ?? "/usr/lib/postgresql/bin"
    }()

    /// The folder holding the data and the socket, or why there is no server.
    ///
    /// Everything here that waits for a program (`initdb`, `pg_ctl`, `createdb`, `psql`) waits on a
    /// thread of its own, never on one of the few threads that run every test's tasks: a test
    /// waiting for the server must not stall the others.
    private static let startup = Task { await offThePool { start() } }

    /// The server's folder, or `nil` after printing (once per process) why there is none:
    /// without PostgreSQL on the machine, its tests skip.
    public static func folder() async -> String? {
        switch await startup.value {
        case .success(let folder): return folder
        case .failure: await printedSkip.value; return nil
        }
    }

    private static let printedSkip = Task {
        if case .failure(let reason) = await startup.value { print("skipping the PostgreSQL tests: \(reason)") }
    }

    /// Runs blocking work on a thread of its own and waits for it without holding a task's thread.
    ///
    /// Not `DispatchQueue.global()`: on Linux its few threads (two, and a couple more when they
    /// block, on a 2-core machine) are the ones Swift's tasks run on, and a dozen `createdb`
    /// waits parked there stalled every other test for minutes.
    static func offThePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: work()) }
        }
    }

    public struct SkipReason: Error, CustomStringConvertible { public var description: String }

    private static func start() -> Result<String, SkipReason> {
        guard FileManager.default.isExecutableFile(atPath: "\(binaries)/initdb") else {
            return .failure(SkipReason(description: "no PostgreSQL server programs (no \(binaries)/initdb); apt-get install postgresql, or set PG_BINDIR"))
        }
        let folder = "/tmp/fspg-\(UUID().uuidString.prefix(8))"
        let asRoot = geteuid() == 0
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            if asRoot { try run("/bin/chown", ["postgres:postgres", folder]) }
            try runAsServer("\(binaries)/initdb", ["-D", "\(folder)/data", "-A", "trust", "-U", "postgres", "--no-sync"])
            // Every store a parallel run's contract and end-to-end suites open, and each daemon's
            // connections, at once: the default 100 was reached once the reader and rules suites came.
            try runAsServer("\(binaries)/pg_ctl", ["-D", "\(folder)/data", "-l", "\(folder)/log", "-w", "-o",
                                                    "-k \(folder) -c listen_addresses='' -c fsync=off -c max_connections=400", "start"])
        } catch {
            return .failure(SkipReason(description: "could not start a PostgreSQL server in \(folder): \(error)"))
        }
        // Not atexit: a test process that crashes or is killed must not leave a server behind.
        let stop = (geteuid() == 0 ? "/usr/sbin/runuser -u postgres -- " : "") + "\(binaries)/pg_ctl -D \(folder)/data -m immediate stop"
        _ = try? spawn("/bin/sh", ["-c", "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done; \(stop); rm -rf \(folder)"],
                       output: "/dev/null")
        return .success(folder)
    }

    /// A fresh database on the server.
    public static func makeDatabase() async throws -> PostgresDatabase {
        guard case .success(let folder) = await startup.value else { throw ToolFailed(description: "no PostgreSQL server") }
        let name = "t_\(UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "_"))"
        try await offThePool { Result { try runAsServer("\(binaries)/createdb", ["-h", folder, "-U", "postgres", name]) } }.get()
        return PostgresDatabase(name: name, socketFolder: folder)
    }

    public static func runAsServer(_ tool: String, _ arguments: [String]) throws {
        if geteuid() == 0 {
            try run("/usr/sbin/runuser", ["-u", "postgres", "--", tool] + arguments)
        } else {
            try run(tool, arguments)
        }
    }

    struct ToolFailed: Error, CustomStringConvertible { var description: String }

    /// Runs a tool to its end, its output in a file.
    ///
    /// Not `Process`: Foundation learns that a child ended when a descriptor it handed the child
    /// closes, and the server `pg_ctl start` leaves behind inherits that descriptor and keeps it
    /// open, so `waitUntilExit()` would never return. `posix_spawn` and `waitpid` do not care.
    static func run(_ tool: String, _ arguments: [String]) throws {
        let log = "/tmp/fspg-tool-\(UUID().uuidString).log"
        defer { unlink(log) }
        let pid = try spawn(tool, arguments, output: log)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        // Exited normally with status 0: the low 7 bits (the signal) and the exit code are all zero.
        guard status == 0 else {
            throw ToolFailed(description: "\((tool as NSString).lastPathComponent) ended with status \(status): \(text.suffix(400))")
        }
    }

    /// Starts a tool, its output in a file, without waiting for it.
    private static func spawn(_ tool: String, _ arguments: [String], output: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // The child would inherit every descriptor the test process has open at this instant,
        // among them the pipes other tests read their processes' output from: a server that
        // lives on (postgres, the watcher) would hold them open, and those reads would never
        // end. Python closes them all before the tool starts (posix_spawn cannot, portably).
        let closer = "import os, sys; os.closerange(3, os.sysconf('SC_OPEN_MAX')); os.execv(sys.argv[1], sys.argv[1:])"
        let argv = (["/usr/bin/env", "python3", "-c", closer, tool] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, "/usr/bin/env", &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw ToolFailed(description: "could not start \(tool): \(String(cString: strerror(spawned)))")
        }
        return pid
    }
}

/// One database on the tests' server, reached over its Unix socket as the `postgres` superuser.
public struct PostgresDatabase: Sendable {
    public let name: String
    public let socketFolder: String

    /// As a libpq URI, for a store's `url`.
    public var url: String { "postgresql:///\(name)?host=\(socketFolder)&user=postgres" }

    /// Runs SQL with `psql`, output discarded.
    public func execute(_ sql: String) async throws {
        let arguments = psqlArguments(sql)
        try await PostgresServer.offThePool { Result { try PostgresServer.run("/usr/bin/psql", arguments) } }.get()
    }

    /// `psql`'s arguments for running `sql` with unaligned, tuples-only output.
    public func psqlArguments(_ sql: String) -> [String] {
        ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", socketFolder, "-U", "postgres", "-d", name, "-c", sql]
    }
}
