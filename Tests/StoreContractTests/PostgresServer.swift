import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL server of the tests' own: `initdb` into a temporary folder, then `pg_ctl` on a
/// Unix socket in that folder, with no TCP. PostgreSQL refuses to run as root, so as root the
/// server runs as the unprivileged `postgres` user, which owns the folder.
///
/// Started once per test process; stopped when the process exits.
enum PostgresServer {
    static let binaries = "/usr/lib/postgresql/15/bin"

    /// The folder holding the data and the socket, or why there is no server.
    static let started: Result<String, SkipReason> = start()

    struct SkipReason: Error, CustomStringConvertible { var description: String }

    private static let stopFolder = Mutex<String?>(nil)

    private static func start() -> Result<String, SkipReason> {
        guard FileManager.default.isExecutableFile(atPath: "\(binaries)/initdb") else {
            return .failure(SkipReason(description: "PostgreSQL 15 is not installed (no \(binaries)/initdb); apt-get install postgresql"))
        }
        let folder = "/tmp/fspg-\(UUID().uuidString.prefix(8))"
        let asRoot = geteuid() == 0
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            if asRoot { try run("/bin/chown", ["postgres:postgres", folder]) }
            try runAsServer("\(binaries)/initdb", ["-D", "\(folder)/data", "-A", "trust", "-U", "postgres", "--no-sync"])
            try runAsServer("\(binaries)/pg_ctl", ["-D", "\(folder)/data", "-l", "\(folder)/log", "-w", "-o",
                                                    "-k \(folder) -c listen_addresses='' -c fsync=off", "start"])
        } catch {
            return .failure(SkipReason(description: "could not start a PostgreSQL server in \(folder): \(error)"))
        }
        stopFolder.withLock { $0 = folder }
        atexit {
            if let folder = PostgresServer.stopFolder.withLock({ $0 }) {
                try? PostgresServer.runAsServer("\(PostgresServer.binaries)/pg_ctl", ["-D", "\(folder)/data", "-m", "immediate", "stop"])
                try? FileManager.default.removeItem(atPath: folder)
            }
        }
        return .success(folder)
    }

    /// A fresh database on the server, as a libpq URI.
    static func makeDatabase() throws -> String {
        let folder = try started.get()
        let name = "t_\(UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "_"))"
        try runAsServer("\(binaries)/createdb",
                        ["-h", folder, "-U", "postgres", name])
        return "postgresql:///\(name)?host=\(folder)&user=postgres"
    }

    static func runAsServer(_ tool: String, _ arguments: [String]) throws {
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
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([tool] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, tool, &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw ToolFailed(description: "could not start \(tool): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        // Exited normally with status 0: the low 7 bits (the signal) and the exit code are all zero.
        guard status == 0 else {
            throw ToolFailed(description: "\((tool as NSString).lastPathComponent) ended with status \(status): \(text.suffix(400))")
        }
    }
}
