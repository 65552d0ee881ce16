import Core
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The store's write lock: an `flock` on `<database>.lock`, holding the holder's pid.
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

    /// Gives back one hold; the last one empties the file and unlocks it.
    func release() {
        guard holds > 0 else { return }
        holds -= 1
        guard holds == 0, descriptor >= 0 else { return }
        _ = ftruncate(descriptor, 0)
        _ = flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    private struct Taken { var pid: Int32? }

    /// Locks without waiting; `nil` when another process holds the lock.
    private func tryLock(holder: String) throws -> Taken? {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw ServiceError(.storage, "opening the lock file \(path)", String(cString: strerror(errno)))
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        // A holder that let go emptied the file; what is left was written by one that died.
        let previous = Self.pid(in: Self.contents(of: fd))
        let record = "pid=\(getpid()) holder=\(holder.replacingOccurrences(of: " ", with: "_")) since=\(Date().formatted(.iso8601))\n"
        _ = ftruncate(fd, 0)
        _ = record.withCString { pwrite(fd, $0, strlen($0), 0) }
        descriptor = fd
        return Taken(pid: previous == getpid() ? nil : previous)
    }

    /// Who holds the lock now, as the file says: `"pid 123 (feedsync_pull)"`.
    private func currentHolder() -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
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
            .flatMap { Int32($0.dropFirst(4)) }
    }
}
