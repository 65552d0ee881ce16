import Core
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The files the SQLite store keeps: the database made a private regular file where the config
/// says, and the names of it and its side files, so nothing else (an export's `--output`)
/// writes over one.
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

    /// Makes sure the database file is a private regular file at `path`, creating it if allowed.
    func preparePrivateFile(create: Bool) throws {
        let operation = "opening the store \(path)"
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT != S_IFLNK else {
                throw ServiceError(.storage, operation, "it is a symbolic link; name the real file in store.path")
            }
            guard info.st_mode & S_IFMT == S_IFREG else { throw ServiceError(.storage, operation, "it is not a regular file") }
        } else if errno == ENOENT {
            guard create else { throw ServiceError(.notFound, operation, "nothing synced yet: run feedsync pull") }
            let folder = (path as NSString).deletingLastPathComponent
            var isFolder: ObjCBool = false
            guard folder.isEmpty || (FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) && isFolder.boolValue) else {
                throw ServiceError(.storage, operation, "the folder \(folder) does not exist")
            }
            let fd = Glibc.open(path, O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw ServiceError(.storage, operation, systemReason(errno)) }
            Glibc.close(fd)
        } else {
            throw ServiceError(.storage, operation, systemReason(errno))
        }
        // Whatever mode the file had (an empty 0644 file someone made), it holds the mirror.
        guard chmod(path, 0o600) == 0 else {
            throw ServiceError(.storage, operation, "cannot make it private (chmod 600): \(systemReason(errno))")
        }
    }
}

extension SQLiteCacheManager {
    /// The database file's path, as the config names it (resolved against the config's folder).
    public var databasePath: String { store.path }
}
