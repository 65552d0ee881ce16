import Core
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The files one command changes together — secret files, the config, files to delete —
/// planned and checked in full before any is touched, then changed all together or not at all.
///
/// Each path is checked as it is planned: a secret never goes through a symlink, into what is
/// not a regular file, over a file others can read, or into a folder that is not there.
/// ``prepare()`` then writes every new file beside its target under a temporary name and
/// checks the config edit as `config check` would. Only ``commit()`` moves them into place:
/// the secrets first, then the config that names them, and last the deletions of files the
/// config no longer names. A failure before the config is in place puts back each file it
/// replaced and removes only the files it created itself (never one that was there before, or
/// that someone else put there meanwhile); a path that changed since it was planned fails the
/// commit before anything moves.
///
///     let changes = FileTransaction()
///     try changes.write(secret: token, to: tokenFile)   // refused now if it cannot go there
///     changes.save(editor)
///     try changes.commit()                               // all of it, or nothing
public final class FileTransaction {
    private struct Write {
        let target: URL
        let bytes: [UInt8]
        /// What was at the target when it was planned; `nil`: nothing.
        let found: FileIdentity?
        var temporary: URL?
    }

    /// What commit changed so far, to undo in reverse.
    private enum Placed {
        case created(URL, FileIdentity?)
        case replaced(URL, backup: URL)
    }

    private var writes: [Write] = []
    private var editor: ConfigEditor?
    private var staged: StagedConfig?
    private var kept: ConfigEditor?
    private var removals: [(url: URL, found: FileIdentity)] = []
    private var placed: [Placed] = []

    public init() {}

    /// Plans to put `secret` (and a line end) in the file at `url`, mode 0600.
    ///
    /// - Returns: whether a file is there now, which the commit replaces.
    /// - Throws: ``ServiceError`` from ``SecretFile/check(_:)``: a symlink, not a regular file,
    ///   readable by others, no such folder; or `.contractViolation` when `url` is planned twice.
    @discardableResult
    public func write(secret: String, to url: URL) throws -> Bool {
        guard !writes.contains(where: { $0.target.standardizedFileURL == url.standardizedFileURL }) else {
            throw ServiceError(.contractViolation, "saving a secret in \(url.path)", "it is planned twice")
        }
        let found = try SecretFile.check(url)
        writes.append(Write(target: url, bytes: Array((secret + "\n").utf8), found: found))
        return found != nil
    }

    /// Plans to save `editor`'s config after the secrets are in place.
    public func save(_ editor: ConfigEditor) {
        self.editor = editor
    }

    /// Plans no change to `editor`'s config, but requires it to be as the editor read it: the
    /// changes were decided from it (a second login's refresh of the feed it names).
    public func keep(_ editor: ConfigEditor) {
        kept = editor
    }

    /// Plans to delete the file at `url` (a symlink itself, never what it points to) once the
    /// config is saved; nothing is planned when there is none.
    public func remove(_ url: URL) {
        if let found = FileIdentity.of(url) { removals.append((url, found)) }
    }

    /// Writes every planned file under its temporary name and checks the config edit; nothing is
    /// in place yet. Done by ``commit()`` when not called before.
    ///
    /// - Throws: the first failure, with every temporary file removed.
    public func prepare(environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        do {
            for index in writes.indices where writes[index].temporary == nil {
                let write = writes[index]
                writes[index].temporary = try TemporaryFile.create(beside: write.target, bytes: write.bytes, mode: 0o600,
                                                                   operation: "saving a secret in \(write.target.path)")
            }
            if let editor, staged == nil { staged = try editor.stage(environment: environment) }
        } catch {
            discard()
            throw error
        }
    }

    /// Moves everything planned into place, or nothing.
    ///
    /// - Returns: one sentence for each planned deletion that did not happen (the file changed
    ///   meanwhile, or could not be removed); everything else is in place.
    /// - Throws: the first failure; every file is then as it was before the commit.
    @discardableResult
    public func commit(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> [String] {
        try prepare(environment: environment)
        do {
            for write in writes where FileIdentity.of(write.target) != write.found {
                throw ServiceError(.locked, "saving a secret in \(write.target.path)",
                                   "it changed while this command ran, so nothing was changed; run the command again")
            }
            if let kept, !kept.isUnchanged {
                throw ServiceError(.locked, "writing \(kept.displayName)", "it changed while this command ran, so nothing was changed; run the command again")
            }
            for write in writes { try place(write) }
            try staged?.commit()
        } catch {
            rollBack()
            discard()
            throw error
        }
        var notes: [String] = []
        for removal in removals {
            if FileIdentity.of(removal.url) != removal.found {
                notes.append("\(removal.url.path) changed while this command ran, so it was not deleted")
            } else if unlink(removal.url.path) != 0 {
                notes.append("\(removal.url.path) could not be deleted: \(String(cString: strerror(errno)))")
            }
        }
        for case .replaced(_, let backup) in placed { unlink(backup.path) }
        TemporaryFile.sync(folders: writes.map { $0.target.deletingLastPathComponent() } + removals.map { $0.url.deletingLastPathComponent() })
        placed = []
        writes = []
        staged = nil
        return notes
    }

    /// Removes every temporary file; nothing planned happens.
    public func discard() {
        for index in writes.indices {
            if let temporary = writes[index].temporary { unlink(temporary.path) }
            writes[index].temporary = nil
        }
        staged?.discard()
        staged = nil
    }

    private func place(_ write: Write) throws {
        guard let temporary = write.temporary else { return }
        let operation = "saving a secret in \(write.target.path)"
        if write.found == nil {
            // A link, not a rename: a file that appeared meanwhile is never replaced.
            guard link(temporary.path, write.target.path) == 0 else {
                let reason = errno
                guard reason == EEXIST else { throw ServiceError(.storage, operation, "cannot create it: \(String(cString: strerror(reason)))") }
                throw ServiceError(.locked, operation, "a file appeared there while this command ran, so nothing was changed; run the command again")
            }
            unlink(temporary.path)
            // Taken once its link count is final: the identity includes the change time.
            placed.append(.created(write.target, FileIdentity.of(write.target)))
        } else {
            // The old file keeps a second name until the end, so a failure can put it back.
            let backup = TemporaryFile.sibling(of: write.target, suffix: "old")
            guard link(write.target.path, backup.path) == 0 else {
                throw ServiceError(.storage, operation, "cannot keep the old file while it is replaced: \(String(cString: strerror(errno)))")
            }
            guard rename(temporary.path, write.target.path) == 0 else {
                let reason = String(cString: strerror(errno))
                unlink(backup.path)
                throw ServiceError(.storage, operation, "cannot replace it: \(reason)")
            }
            placed.append(.replaced(write.target, backup: backup))
        }
    }

    /// Undoes what ``place(_:)`` did, last first: a replaced file gets its old contents back; a
    /// created one goes, if it is still the one this transaction made.
    private func rollBack() {
        for change in placed.reversed() {
            switch change {
            case .created(let url, let identity):
                if let identity, FileIdentity.of(url) == identity { unlink(url.path) }
            case .replaced(let url, let backup):
                rename(backup.path, url.path)
            }
        }
        placed = []
    }
}
