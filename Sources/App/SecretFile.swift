import Core
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A file that holds one secret (an access token, an app password), as `feedsync login` writes
/// it: mode 0600, never reached through a symlink, replaced atomically.
public enum SecretFile {
    /// Writes `secret` to `url`.
    ///
    /// - Throws: ``ServiceError`` `.refused` when a file is already there that is a symlink, not
    ///   a regular file, or readable by others (it is left alone: someone may rely on it);
    ///   `.storage` when the folder cannot be written.
    public static func write(_ secret: String, to url: URL) throws {
        let operation = "saving the secret in \(url.path)"
        var info = stat()
        if lstat(url.path, &info) == 0 {
            if info.st_mode & S_IFMT == S_IFLNK {
                throw ServiceError(.refused, operation, "\(url.path) is a symlink; feedsync writes secrets only to a file of its own (remove it or pass another path)")
            }
            guard info.st_mode & S_IFMT == S_IFREG else {
                throw ServiceError(.refused, operation, "\(url.path) is not a regular file")
            }
            guard info.st_mode & 0o077 == 0 else {
                throw ServiceError(.refused, operation, "\(url.path) can be read by others (mode \(String(info.st_mode & 0o777, radix: 8))); "
                                   + "feedsync will not put a secret there (remove it, or chmod 600 it and try again)")
            }
        }
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(getpid()).new")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw ServiceError(.storage, operation, "cannot create a file in \(url.deletingLastPathComponent().path): \(String(cString: strerror(errno)))")
        }
        let bytes = Array((secret + "\n").utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = fchmod(fd, 0o600) == 0 && fsync(fd) == 0
        let closed = close(fd) == 0
        guard written == bytes.count, synced, closed, rename(temporary.path, url.path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary.path)
            throw ServiceError(.storage, operation, "cannot write it: \(reason)")
        }
    }

    /// Removes the file at `url`, if there is one (a symlink is removed, never followed).
    public static func remove(_ url: URL) {
        unlink(url.path)
    }
}

/// Tells the `feedsyncd` serving a store on this machine to reload its config.
public enum DaemonReload {
    /// Sends SIGHUP to every running `feedsyncd` of this machine the store records, and
    /// returns their pids.
    public static func signal(_ daemons: [DaemonInstance]) -> [Int32] {
        let here = ProcessInfo.processInfo.hostName
        return daemons.compactMap { daemon in
            guard daemon.host == here, let pid = Int32(daemon.process), pid > 0, isFeedsyncd(pid) else { return nil }
            return kill(pid, SIGHUP) == 0 ? pid : nil
        }
    }

    /// Whether `pid` is a `feedsyncd` (`/proc/PID/comm`), so a recycled pid is never signalled.
    static func isFeedsyncd(_ pid: Int32) -> Bool {
        guard let name = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8) else { return false }
        return name.trimmingCharacters(in: .whitespacesAndNewlines) == "feedsyncd"
    }
}
