import Core
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A new file written beside the one it will replace, under a name no one else uses, and made
/// durable before anything is moved into place (``FileTransaction``, ``StagedConfig``).
enum TemporaryFile {
    /// Creates a file beside `target` holding `bytes` with `mode`, synced to disk, and returns it.
    ///
    /// - Throws: ``ServiceError`` `.storage` naming the folder and the reason, with nothing left behind.
    static func create(beside target: URL, bytes: [UInt8], mode: mode_t, operation: String) throws -> URL {
        let url = sibling(of: target, suffix: "new")
        let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else {
            throw ServiceError(.storage, operation, "cannot create a file in \(target.deletingLastPathComponent().path): \(String(cString: strerror(errno)))")
        }
        var written = 0
        var failure: Int32 = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, bytes.count - written) }
            guard n > 0 else { failure = n < 0 ? errno : ENOSPC; break }
            written += n
        }
        if failure == 0, fchmod(fd, mode) != 0 || fsync(fd) != 0 { failure = errno }
        if close(fd) != 0, failure == 0 { failure = errno }
        guard failure == 0 else {
            unlink(url.path)
            throw ServiceError(.storage, operation, "cannot write \(url.path): \(String(cString: strerror(failure)))")
        }
        return url
    }

    /// A hidden name beside `target` for this process: `.NAME.PID-RANDOM.SUFFIX`.
    static func sibling(of target: URL, suffix: String) -> URL {
        target.deletingLastPathComponent()
            .appendingPathComponent(".\(target.lastPathComponent).\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 36)).\(suffix)")
    }

    /// Makes the names just changed in `folders` durable.
    static func sync(folders: [URL]) {
        for folder in Set(folders.map(\.path)) {
            let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if fd >= 0 {
                fsync(fd)
                close(fd)
            }
        }
    }
}
