import Core
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A config edit written beside the config under a temporary name and checked exactly as
/// `config check` checks it, ready to be moved into place: ``ConfigEditor/save(environment:)``
/// in two steps, so a ``FileTransaction`` can check it before it writes anything else.
public struct StagedConfig {
    let editor: ConfigEditor
    let temporary: URL

    /// Moves the new file into place (renamed over the old one, or linked as a new one).
    ///
    /// - Throws: ``ServiceError`` `.locked` when the file changed (or appeared) since the editor
    ///   read it, `.storage` when it cannot be replaced; nothing was changed either way.
    public func commit() throws {
        let operation = "writing \(editor.displayName)"
        // Another edit since this one read the file (a second feedsync, an editor, while a login
        // waited for the browser) is never overwritten: the command is run again instead.
        let changed = ServiceError(.locked, operation, "it changed while this command ran, so the change was not written; run the command again")
        if editor.existed {
            guard editor.isUnchanged else { throw changed }
            guard rename(temporary.path, editor.url.path) == 0 else {
                throw ServiceError(.storage, operation, "cannot replace it: \(String(cString: strerror(errno)))")
            }
        } else {
            // A new file: linking fails rather than replace one made meanwhile.
            guard link(temporary.path, editor.url.path) == 0 else {
                if errno == EEXIST { throw changed }
                throw ServiceError(.storage, operation, "cannot create it: \(String(cString: strerror(errno)))")
            }
            unlink(temporary.path)
        }
        // The rename is durable once the folder is.
        TemporaryFile.sync(folders: [editor.url.deletingLastPathComponent()])
    }

    /// Removes the temporary file, if it is still there (after ``commit()`` it is not).
    public func discard() {
        unlink(temporary.path)
    }
}

extension ConfigEditor {
    /// Whether the file is still as the editor read it (and still absent, if it was).
    public var isUnchanged: Bool {
        existed ? FileManager.default.contents(atPath: url.path) == original : !FileManager.default.fileExists(atPath: url.path)
    }

    /// Writes the new text beside the file and checks it as `config check` would, secrets
    /// deferred (a missing one is not the edit's fault); the old file's mode is kept (a new file
    /// gets 0600). Nothing is in place until ``StagedConfig/commit()``.
    ///
    /// - Throws: ``ConfigError`` when the file is not a regular file or the new text does not
    ///   check out, ``ServiceError`` `.storage` when the folder cannot be written; no file is left.
    public func stage(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> StagedConfig {
        var mode: mode_t = 0o600
        var info = stat()
        if lstat(url.path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFREG else {
                throw ConfigError(file: displayName, keyPath: "", message: "is not a regular file; feedsync changes only a regular config file")
            }
            mode = info.st_mode & 0o7777
        }
        let temporary = try TemporaryFile.create(beside: url, bytes: Array(text.utf8), mode: mode, operation: "writing \(displayName)")
        var options = Runtime.Options(feeds: .all, createStore: false)
        options.registry = registry
        options.deferMissingSecrets = true
        options.optionLikeNames = optionLikeNames
        do {
            _ = try Runtime.load(configPath: temporary.path, environment: environment, options)
        } catch let error as ConfigError {
            unlink(temporary.path)
            throw ConfigError(file: displayName, keyPath: error.keyPath,
                              message: "\(error.message) (the change was not written; \(displayName) is as it was)")
        } catch {
            unlink(temporary.path)
            throw error
        }
        return StagedConfig(editor: self, temporary: temporary)
    }
}
