import Foundation
import Synchronization

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

    static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: "/tmp")
        // A file, not a pipe: the server pg_ctl starts keeps its output open, and a pipe would never end.
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("fspg-tool-\(UUID().uuidString).log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let output = try FileHandle(forWritingTo: log)
        defer { try? output.close() }
        process.standardOutput = output
        process.standardError = output
        try process.run()
        process.waitUntilExit()
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        guard process.terminationStatus == 0 else {
            throw ToolFailed(description: "\((tool as NSString).lastPathComponent) exited \(process.terminationStatus): \(text.suffix(400))")
        }
    }
}
