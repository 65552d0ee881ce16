import App
import Core
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where `export --output` writes, chosen by what the path names, so that nothing the user
/// names is clobbered:
/// - `-`, or no `--output`: standard output, streaming;
/// - a FIFO or a character device (also through a symbolic link such as `/dev/stdout`):
///   written to directly, streaming; the link and the device stay as they are; whatever is
///   standard output already (`/dev/stdout` when it is a file) is written through it;
/// - a regular file or a new path: a temporary file beside it, renamed over it only once the
///   export is complete and on the disk; through a symbolic link, the file it points to is
///   replaced and the link kept;
/// - refused (64): a directory, a block device, a socket, a link to nothing, and the store's
///   database or any of its side files, however the path reaches them (a symbolic link, a
///   relative path, `..`, another hard link): compared by device and inode, and by name in
///   the store's folder for side files that do not exist yet.
final class ExportTarget {
    let output: CheckedOutput
    /// For a file written atomically: the temporary file, and the path it replaces.
    private let replacement: (temporary: String, final: String)?

    private init(output: CheckedOutput, replacement: (temporary: String, final: String)? = nil) {
        self.output = output
        self.replacement = replacement
    }

    /// Opens what `path` names for writing, or refuses it.
    ///
    /// - Parameter storeFiles: the store's database path and its side-file rule, when local.
    /// - Throws: ``UsageError`` for a target that is refused; ``OutputError`` when it cannot be opened.
    static func open(_ path: String?, standardOutput: CheckedOutput,
                     storeFiles: (database: String, isStoreFile: @Sendable (String) -> Bool)?, usage: String) throws -> ExportTarget {
        guard let path, path != "-" else { return ExportTarget(output: standardOutput) }
        let shown = Terminal.safe(path, limit: 300)
        func refuse(_ why: String) -> UsageError { UsageError("--output \(shown): \(why)", usage: usage) }
        guard !path.isEmpty else { throw refuse("name a file, or - for standard output") }
        let store = storeFiles.map { StoreFiles(database: $0.database, isStoreFile: $0.isStoreFile) }

        var link = stat()
        guard lstat(path, &link) == 0 else {
            guard errno == ENOENT else { throw OutputError(target: path, code: errno) }
            // A new file: its folder must exist, and it must not be a store file yet to be made.
            let folder = (path as NSString).deletingLastPathComponent
            let name = (path as NSString).lastPathComponent
            try store?.check(folder: folder.isEmpty ? "." : folder, name: name, refuse)
            return try replacing(path, folder: folder.isEmpty ? "." : folder, mode: nil)
        }
        var target = stat()
        guard stat(path, &target) == 0 else {
            if link.st_mode & S_IFMT == S_IFLNK { throw refuse("it is a symbolic link to nothing; name the file itself") }
            throw OutputError(target: path, code: errno)
        }
        try store?.check(identity: target, refuse)
        // What standard output already is (`/dev/stdout`, or its file by name) is written through
        // it: streaming, at its offset, and failing as it fails when it was closed.
        var standard = stat()
        if fstat(STDOUT_FILENO, &standard) == 0, standard.st_dev == target.st_dev, standard.st_ino == target.st_ino {
            return ExportTarget(output: standardOutput)
        }
        switch target.st_mode & S_IFMT {
        case S_IFDIR:
            throw refuse("it is a directory; name a file in it")
        case S_IFREG:
            // Through a link the file it points to is replaced, beside itself; the link stays.
            guard let real = realpath(path, nil) else { throw refuse("the file it names cannot be resolved (\(String(cString: strerror(errno))))") }
            let resolved = String(cString: real)
            free(real)
            let folder = (resolved as NSString).deletingLastPathComponent
            try store?.check(folder: folder, name: (resolved as NSString).lastPathComponent, refuse)
            return try replacing(resolved, folder: folder, mode: target.st_mode & 0o7777)
        case S_IFIFO, S_IFCHR:
            let fd = Glibc.open(path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw OutputError(target: path, code: errno) }
            // What was opened must be what was checked: a path swapped meanwhile is not written.
            var opened = stat()
            guard fstat(fd, &opened) == 0, opened.st_dev == target.st_dev, opened.st_ino == target.st_ino else {
                Glibc.close(fd)
                throw refuse("it changed while it was being opened; try again")
            }
            return ExportTarget(output: CheckedOutput(descriptor: fd, name: path))
        case S_IFBLK:
            throw refuse("it is a block device, which an export never writes to")
        default:
            throw refuse("it is a socket, which an export cannot write to")
        }
    }

    /// A temporary file beside `final`, in the same folder, so `rename` replaces it at once.
    private static func replacing(_ final: String, folder: String, mode: mode_t?) throws -> ExportTarget {
        let name = (final as NSString).lastPathComponent
        let temporary = (folder as NSString).appendingPathComponent(".\(name).\(getpid()).partial")
        unlink(temporary)
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw OutputError(target: final, code: errno) }
        // A file replaced keeps its permissions; a new one gets the umask's.
        if let mode { _ = fchmod(fd, mode) }
        return ExportTarget(output: CheckedOutput(descriptor: fd, name: final), replacement: (temporary, final))
    }

    /// Finishes the export: everything written out, and for a file, synced and put in place.
    func commit() throws {
        guard let replacement else {
            try output.flush()
            return
        }
        do {
            try output.sync()
            try output.close()
            guard rename(replacement.temporary, replacement.final) == 0 else {
                throw OutputError(target: replacement.final, code: errno)
            }
        } catch {
            unlink(replacement.temporary)
            throw error
        }
    }

    /// Gives up: a temporary file is removed, and what the path named is left as it was.
    func abandon() {
        guard let replacement else { return }
        output.discard()
        unlink(replacement.temporary)
    }
}

/// The store's files, for refusing them as an output.
private struct StoreFiles {
    let folder: stat?
    let identities: [(dev: UInt, ino: UInt)]
    let isStoreFile: @Sendable (String) -> Bool

    init(database: String, isStoreFile: @escaping @Sendable (String) -> Bool) {
        self.isStoreFile = isStoreFile
        let folderPath = (database as NSString).deletingLastPathComponent
        var info = stat()
        folder = stat(folderPath.isEmpty ? "." : folderPath, &info) == 0 ? info : nil
        // Every file in the folder by the store's names, as they are now (hard links included).
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folderPath.isEmpty ? "." : folderPath)) ?? []
        identities = names.filter(isStoreFile).compactMap { name in
            var file = stat()
            guard lstat((folderPath as NSString).appendingPathComponent(name), &file) == 0 else { return nil }
            return (UInt(file.st_dev), UInt(file.st_ino))
        }
    }

    /// Refuses a file that is one of the store's files now.
    func check(identity target: stat, _ refuse: (String) -> UsageError) throws {
        if identities.contains(where: { $0.dev == UInt(target.st_dev) && $0.ino == UInt(target.st_ino) }) {
            throw refuse("it is the store or one of its side files, which an export never replaces; name another file")
        }
    }

    /// Refuses a name in the store's folder that the store uses or may create.
    func check(folder path: String, name: String, _ refuse: (String) -> UsageError) throws {
        guard let folder, isStoreFile(name) else { return }
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        if info.st_dev == folder.st_dev && info.st_ino == folder.st_ino {
            throw refuse("it is the store or one of its side files, which an export never replaces; name another file")
        }
    }
}
