import Foundation

/// Runs SQL through the `sqlite3` command-line tool on the database at `path`, as another program
/// reading the store would: its exit status and what it printed (output and errors, one stream).
public func runSQLite3(_ path: String, _ sql: String) throws -> (status: Int32, printed: Data) {
    try runSQLite3(path, commands: [sql])
}

/// Runs each of `commands` in turn, SQL or a dot-command (`.stats on`), in one sqlite3 session.
public func runSQLite3(_ path: String, commands: [String]) throws -> (status: Int32, printed: Data) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["sqlite3", path] + commands
    let pipe = makePipe()
    defer { closeEnds(pipe) }
    process.standardOutput = pipe
    process.standardError = pipe
    try launch(process)
    let printed = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, printed)
}
