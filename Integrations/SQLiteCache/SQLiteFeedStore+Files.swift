import Core

/// The files the SQLite store keeps, so nothing else (an export's `--output`) writes over one.
extension SQLiteFeedStore {
    /// Whether `name`, a file name in the database's folder, is the database or one of the
    /// files kept beside it, for a database file named `database`.
    ///
    /// Matched by the database's name followed by a known suffix, so side files added later
    /// are covered when their names follow the same pattern:
    /// - the name itself, and any name that goes on with `-`: SQLite's `-wal`, `-shm`,
    ///   `-journal` and super-journals (`-mj…`);
    /// - `.lock` and `.daemon.lock`, the store's locks (``StoreLockFile``);
    /// - any name that goes on with `.sessions`: the sessions file, its temporary files, and
    ///   a sessions database with its own `-wal`, `-shm` and `-journal`.
    public nonisolated static func isStoreFile(named name: String, database: String) -> Bool {
        guard !database.isEmpty, name.hasPrefix(database) else { return false }
        let rest = name.dropFirst(database.count)
        return rest.isEmpty || rest.hasPrefix("-") || rest == ".lock" || rest == ".daemon.lock" || rest.hasPrefix(".sessions")
    }
}

extension SQLiteCacheManager {
    /// The database file's path, as the config names it (resolved against the config's folder).
    public var databasePath: String { store.path }
}
