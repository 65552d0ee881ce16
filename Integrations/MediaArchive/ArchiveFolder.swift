import Core
import Foundation
import IntegrationKit
#if canImport(Glibc)
import Glibc
#endif

/// The archive's folder: files named by their SHA-256 under two levels of fan-out
/// (`ab/cd/abcd…`), and the downloads in progress under `.partial/`, each named by the SHA-256
/// of its address.
///
/// No name comes from a server: every path here is made of hex digits the archive computed,
/// so no `..`, NUL or link a server sends can point a write outside the folder. Files are
/// opened without following a link at their own name.
struct ArchiveFolder: Sendable {
    let root: URL

    /// Makes the folder and its `.partial/` when missing.
    init(_ root: URL) throws {
        self.root = root.standardizedFileURL
        try FileManager.default.createDirectory(at: self.root.appendingPathComponent(".partial"), withIntermediateDirectories: true)
    }

    /// Where the file of `digest` is; `nil` for a digest that is not 64 hex digits.
    func path(ofDigest digest: String) -> String? {
        MediaItem.localPath(forDigest: digest).map { root.appendingPathComponent($0).path }
    }

    /// Where the download of `url` in progress is.
    func partialPath(of url: URL) -> String {
        root.appendingPathComponent(".partial").appendingPathComponent(SHA256.hex(Data(url.absoluteString.utf8))).path
    }

    /// Opens the partial file of `url` for appending, making it when missing.
    ///
    /// - Returns: the descriptor and how many bytes it already holds (what a resume skips).
    func openPartial(of url: URL) throws -> (file: Int32, size: Int64) {
        let path = partialPath(of: url)
        let file = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard file >= 0 else { throw ArchiveError("the archive cannot write \(path) (\(String(cString: strerror(errno))))") }
        var info = stat()
        guard fstat(file, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(file)
            throw ArchiveError("\(path) is not a regular file")
        }
        return (file, Int64(info.st_size))
    }

    /// Gives a complete partial file its final name by its digest; when that file exists
    /// already (the same bytes under another address), the partial is dropped instead.
    ///
    /// - Returns: the digest, as 64 lower-case hex digits.
    func install(partialOf url: URL) throws -> String {
        let partial = partialPath(of: url)
        guard let digest = FileDigest.sha256Hex(ofFileAt: partial), let final = path(ofDigest: digest) else {
            throw ArchiveError("the archive cannot read back \(partial)")
        }
        if FileManager.default.fileExists(atPath: final) {
            unlink(partial)
            return digest
        }
        let folder = (final as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        guard rename(partial, final) == 0 else { throw ArchiveError("the archive cannot rename \(partial) to \(final) (\(String(cString: strerror(errno))))") }
        return digest
    }

    /// Drops the partial file of `url`, if any.
    func removePartial(of url: URL) { unlink(partialPath(of: url)) }

    /// Removes the file of `digest`, and its fan-out folders once empty.
    func removeFile(digest: String) throws {
        guard let path = path(ofDigest: digest) else { return }
        if unlink(path) != 0, errno != ENOENT { throw ArchiveError("the archive cannot remove \(path) (\(String(cString: strerror(errno))))") }
        let inner = (path as NSString).deletingLastPathComponent
        if rmdir(inner) == 0 { rmdir((inner as NSString).deletingLastPathComponent) }
    }

    /// Removes the partial files last written more than `age` seconds ago.
    func removeStalePartials(olderThan age: TimeInterval) throws {
        let folder = root.appendingPathComponent(".partial")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for name in names {
            let path = folder.appendingPathComponent(name).path
            let modified = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate]) as? Date
            if let modified, Date().timeIntervalSince(modified) > age { unlink(path) }
        }
    }
}

/// The archive's folder cannot be written or read as it must: one sentence naming the path.
struct ArchiveError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
