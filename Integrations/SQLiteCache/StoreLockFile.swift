import Core
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A lock between processes: an `flock` on a small file that records the holder's pid.
///
/// The store uses two: `<database>.lock`, its write lock, and `<database>.daemon.lock`, held
/// by the one `feedsyncd` that serves the store for as long as it runs.
///
/// The kernel drops an `flock` when its process dies, so a crashed holder never blocks anyone;
/// the pid it left in the file tells the next holder that it took over a stale lock. Holds
/// within one process are counted, so the daemon's feeds share one lock.
///
/// - Important: Not `Sendable`; the store actor owns it.
final class StoreLockFile {
    let path: String
    private var descriptor: Int32 = -1
    private var holds = 0

    init(path: String) { self.path = path }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// The outcome of one attempt to take a hold.
    enum Attempt {
        /// Held; `stalePid` is a dead holder whose lock was taken over.
        case held(stalePid: Int32?)
        /// Another process holds it; `holder` says who, as its file says.
        case busy(holder: String?)
    }

    /// Takes one hold without waiting, locking the file first if this process holds it not yet.
    func tryAcquire(holder: String) throws -> Attempt {
        if holds > 0 {
            holds += 1
            return .held(stalePid: nil)
        }
        guard let taken = try tryLock(holder: holder) else { return .busy(holder: currentHolder()) }
        holds = 1
        return .held(stalePid: taken.pid)
    }

    /// Gives back one hold; the last one marks the record free and unlocks the file.
    func release() {
        guard holds > 0 else { return }
        holds -= 1
        guard holds == 0, descriptor >= 0 else { return }
        Self.writeRecord("free", to: descriptor)
        _ = flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    private struct Taken { var pid: Int32? }

    /// The record is written over in place at a fixed width, never truncated: a lock file is
    /// only ever this process's own small file, and nothing else is destroyed if that is not so.
    private static let recordWidth = 160

    /// Opens the lock file without following a symbolic link, and only if it is a regular file
    /// with one name that this user owns, so the lock can never write into another file.
    private func openLockFile() throws -> Int32 {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            let reason = errno == ELOOP ? "it is a symbolic link, which is never followed" : systemReason(errno)
            throw ServiceError(.storage, "opening the lock file \(path)", reason)
        }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1, info.st_uid == geteuid() else {
            close(fd)
            throw ServiceError(.storage, "opening the lock file \(path)",
                               "it is not a regular file of its own owned by this user; remove it and try again")
        }
        return fd
    }

    /// Locks without waiting; `nil` when another process holds the lock.
    private func tryLock(holder: String) throws -> Taken? {
        let fd = try openLockFile()
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        // A holder that let go marked the record free; a pid left there was written by one that died.
        let previous = Self.pid(in: Self.contents(of: fd))
        Self.writeRecord("pid=\(getpid()) holder=\(holder.replacingOccurrences(of: " ", with: "_")) since=\(Date().formatted(.iso8601))",
                         to: fd)
        descriptor = fd
        return Taken(pid: previous == getpid() ? nil : previous)
    }

    private static func writeRecord(_ text: String, to fd: Int32) {
        let line = String(text.prefix(recordWidth - 1)).padding(toLength: recordWidth - 1, withPad: " ", startingAt: 0) + "\n"
        _ = line.withCString { pwrite(fd, $0, strlen($0), 0) }
    }

    /// Who holds the lock now, as the file says: `"pid 123 (feedsync pull)"`.
    private func currentHolder() -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let text = Self.contents(of: fd)
        guard let pid = Self.pid(in: text) else { return nil }
        let holder = text.split(separator: " ").first { $0.hasPrefix("holder=") }?.dropFirst("holder=".count)
        return "pid \(pid)" + (holder.map { " (\($0.replacingOccurrences(of: "_", with: " ")))" } ?? "")
    }

    private static func contents(of fd: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = pread(fd, &buffer, buffer.count, 0)
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : ""
    }

    private static func pid(in text: String) -> Int32? {
        text.split(whereSeparator: { $0 == " " || $0 == "\n" }).first { $0.hasPrefix("pid=") }
            .flatMap { Int32($0.dropFirst(4)) }.flatMap { $0 > 0 ? $0 : nil }
    }
}
