import Core
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A file that holds one secret (an access token, an app password, an app's client secret), as
/// `feedsync login` keeps it: mode 0600, never reached through a symlink. ``FileTransaction``
/// writes it; this type says whether a path may hold one.
public enum SecretFile {
    /// Checks that a secret may go to `url`, and returns the file there now (`nil`: none).
    ///
    /// - Throws: ``ServiceError`` `.refused` when a file is there that is a symlink, not a
    ///   regular file, or readable by others (it is left alone: someone may rely on it);
    ///   `.notFound` when its folder does not exist or is not a folder.
    public static func check(_ url: URL) throws -> FileIdentity? {
        let operation = "saving a secret in \(url.path)"
        var info = stat()
        guard lstat(url.path, &info) == 0 else {
            let reason = errno
            guard reason == ENOENT || reason == ENOTDIR else {
                throw ServiceError(.storage, operation, "cannot look at it: \(String(cString: strerror(reason)))")
            }
            let folder = url.deletingLastPathComponent()
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else {
                throw ServiceError(.notFound, operation, "\(folder.path) is not a folder; create it or pass another path")
            }
            return nil
        }
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
        return FileIdentity(info)
    }

    /// The text of the regular file at `url` (never through a symlink), at most `limit` bytes,
    /// without its line end; `nil` when there is none, it is larger, or it is not UTF-8.
    public static func read(_ url: URL, limit: Int = 64 << 10) -> String? {
        let fd = open(url.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= limit else { return nil }
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        var count = 0
        while count <= limit {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, limit + 1 - count) }
            guard n > 0 else { break }
            count += n
        }
        guard count <= limit, let text = String(validating: bytes[..<count], as: UTF8.self) else { return nil }
        return text.trimmingCharacters(in: .newlines)
    }
}

/// Which file a path named when it was looked at, to tell at commit time whether it is still
/// that file: device and inode, and — since a file deleted and made again may get the same
/// inode — its type and mode, size and change times.
public struct FileIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64
    let mode: UInt32
    let size: Int64
    let modified: [Int]
    let changed: [Int]

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        mode = UInt32(info.st_mode)
        size = Int64(info.st_size)
        modified = [Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec)]
        changed = [Int(info.st_ctim.tv_sec), Int(info.st_ctim.tv_nsec)]
    }

    /// The file at `url` now, never through a symlink (a symlink is itself a file here).
    static func of(_ url: URL) -> FileIdentity? {
        var info = stat()
        return lstat(url.path, &info) == 0 ? FileIdentity(info) : nil
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
