import Core
import Foundation
import StoreKit
#if canImport(Glibc)
import Glibc
#endif

/// Each feed's backend tokens as earlier versions kept them, in a private file beside the
/// database: `<database>.sessions`. ``SessionDatabase`` moves them in and removes the file;
/// the upgrade of a still older store (its `sessions` table) writes it first.
///
/// Tokens are not kept in the database, because people publish their mirror (Datasette,
/// a copied file) and every table goes with it. The file is JSON, mode 0600, replaced
/// atomically (a new file, then `rename`), and never opened through a symbolic link.
///
///     {"version": 1, "sessions": {"home": {"backend": "httpapi https://…", "accessToken": "…",
///                                         "refreshToken": "…", "expiresAt": 1790000000000}}}
///
/// - Important: Not `Sendable`; the store actor owns it. Writers hold the store's write lock.
struct SessionFile {
    struct Entry: Codable, Equatable {
        /// The identity of the backend that issued the tokens.
        var backend: String
        var accessToken: String
        var refreshToken: String?
        /// Milliseconds since 1970.
        var expiresAt: Int64?
    }

    private struct Contents: Codable {
        var version = 1
        var sessions: [String: Entry] = [:]
    }

    let path: String

    /// Every feed's entry; none when the file does not exist yet.
    func read() throws -> [String: Entry] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            if errno == ENOENT { return [:] }
            throw failure("reading", errno == ELOOP ? "it is a symbolic link, which is never followed" : systemReason(errno))
        }
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = Glibc.read(fd, &buffer, buffer.count)
            guard count > 0 else {
                if count < 0 { throw failure("reading", systemReason(errno)) }
                break
            }
            data.append(contentsOf: buffer[0..<count])
            guard data.count <= 16 << 20 else { throw failure("reading", "it is larger than 16 MiB") }
        }
        guard !data.isEmpty else { return [:] }
        guard let contents = try? JSONDecoder().decode(Contents.self, from: data) else {
            throw failure("reading", "it is not a sessions file; remove it to log in again")
        }
        return contents.sessions
    }

    /// Replaces the file with `entries`, or removes it when there are none.
    func write(_ entries: [String: Entry]) throws {
        guard !entries.isEmpty else {
            if unlink(path) != 0 && errno != ENOENT { throw failure("removing", systemReason(errno)) }
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(Contents(sessions: entries))
        let temporary = "\(path).\(getpid()).tmp"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw failure("writing", systemReason(errno)) }
        let written = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == data.count, synced, rename(temporary, path) == 0 else {
            let reason = systemReason(errno)
            unlink(temporary)
            throw failure("writing", reason)
        }
    }

    private func failure(_ doing: String, _ reason: String) -> ServiceError {
        ServiceError(.storage, "\(doing) the sessions file \(path)", reason)
    }
}

extension SessionFile.Entry {
    init(_ session: Session, backend: String) {
        self.init(backend: backend, accessToken: session.accessToken.revealed, refreshToken: session.refreshToken?.revealed,
                  expiresAt: session.expiresAt.map(StoredTime.milliseconds))
    }

    var session: Session {
        Session(accessToken: Secret(accessToken), refreshToken: refreshToken.map(Secret.init),
                expiresAt: expiresAt.map(StoredTime.date))
    }
}
