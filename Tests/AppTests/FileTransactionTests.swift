@testable import App
import Core
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A real folder: every planned change happens, or none does, and a failure removes only what
/// the transaction created.
@Suite struct FileTransactionTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-transaction-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> URL { folder.appendingPathComponent(name) }

    func make(_ name: String, _ text: String, mode: mode_t = 0o600) throws {
        try Data(text.utf8).write(to: path(name))
        chmod(path(name).path, mode)
    }

    /// Every entry of the folder, hidden ones included: name → bytes, or `-> target` for a symlink.
    func snapshot() -> [String: String] {
        var all: [String: String] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] {
            let url = path(name)
            if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: url.path) {
                all[name] = "-> \(target)"
            } else {
                all[name] = String(decoding: FileManager.default.contents(atPath: url.path) ?? Data(), as: UTF8.self)
            }
        }
        return all
    }

    func config(_ feeds: String = #"{"name": "blog", "posts": {"integration": "webfeed", "url": "https://example.org/feed"}}"#) throws -> ConfigEditor {
        try make("feedsync.json", #"{"feeds": [\#(feeds)]}"# + "\n")
        return try ConfigEditor(configPath: path("feedsync.json").path, environment: [:])
    }

    func addFeed(_ editor: inout ConfigEditor, _ name: String) throws {
        try editor.addFeed(name: name, fields: [("posts", .object([("integration", .string("webfeed")), ("url", .string("https://example.org/\(name)"))]))],
                           usage: "u", environment: [:])
    }

    @Test func newSecretsAndTheConfigGoInPlaceTogether() throws {
        var editor = try config()
        try addFeed(&editor, "second")
        let changes = FileTransaction()
        #expect(try changes.write(secret: "token", to: path("a.token")) == false)
        #expect(try changes.write(secret: "{}", to: path("a.token.app")) == false)
        changes.save(editor)
        #expect(try changes.commit(environment: [:]).isEmpty)
        let after = snapshot()
        #expect(after.keys.sorted() == ["a.token", "a.token.app", "feedsync.json"], "no temporary file stays: \(after.keys.sorted())")
        #expect(after["a.token"] == "token\n" && after["feedsync.json"]?.contains("\"second\"") == true)
        var info = stat()
        #expect(lstat(path("a.token").path, &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    @Test func aSecretReplacesTheFileThereInPlace() throws {
        try make("a.token", "old\n")
        let changes = FileTransaction()
        #expect(try changes.write(secret: "new", to: path("a.token")) == true)
        try changes.commit(environment: [:])
        #expect(snapshot() == ["a.token": "new\n"])
    }

    @Test(arguments: ["symlink", "readable", "folder", "fifo", "no folder", "file as folder"])
    func aPathASecretCannotGoToIsRefusedWhenPlanned(_ kind: String) throws {
        var target = path("a.token")
        switch kind {
        case "symlink":
            try make("elsewhere", "someone's\n")
            symlink(path("elsewhere").path, target.path)
        case "readable": try make("a.token", "old\n", mode: 0o644)
        case "folder": try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
        case "fifo": mkfifo(target.path, 0o600)
        case "no folder": target = path("missing/a.token")
        default:
            try make("plain", "x\n")
            target = path("plain/a.token")
        }
        let before = snapshot()
        let changes = FileTransaction()
        #expect(throws: ServiceError.self) { try changes.write(secret: "token", to: target) }
        try changes.commit(environment: [:])
        #expect(snapshot() == before)
    }

    @Test func aConfigEditThatDoesNotCheckOutPlacesNoSecret() throws {
        var editor = try config()
        try editor.addFeed(name: "bad", fields: [("posts", .object([("integration", .string("gopher"))]))], usage: "u", environment: [:])
        try make("a.token", "old\n")
        let before = snapshot()
        let changes = FileTransaction()
        try changes.write(secret: "new", to: path("a.token"))
        try changes.write(secret: "token", to: path("b.token"))
        changes.save(editor)
        #expect(throws: ConfigError.self) { try changes.commit(environment: [:]) }
        #expect(snapshot() == before)
    }

    @Test func aConfigThatChangedMeanwhilePutsEverySecretBack() throws {
        var editor = try config()
        try addFeed(&editor, "second")
        try make("a.token", "old\n")
        try make("a.token.app", "old app\n")
        let changes = FileTransaction()
        try changes.write(secret: "new", to: path("a.token"))
        try changes.write(secret: "new app", to: path("a.token.app"))
        try changes.write(secret: "token", to: path("b.token"))
        changes.save(editor)
        try changes.prepare(environment: [:])
        // Someone edits the config after the check and before the move.
        let edited = try String(contentsOf: path("feedsync.json"), encoding: .utf8) + " "
        try Data(edited.utf8).write(to: path("feedsync.json"))
        let before = snapshot().filter { !$0.key.hasPrefix(".") }
        do {
            try changes.commit(environment: [:])
            Issue.record("committed over a changed config")
        } catch let error as ServiceError {
            #expect(error.code == .locked, "\(error)")
        }
        #expect(snapshot() == before, "the old secrets back, the new one gone, no temporary or backup file")
    }

    @Test(arguments: ["appears", "replaced", "becomes a symlink", "goes"])
    func aPathThatChangedSincePlannedFailsTheCommitBeforeAnythingMoves(_ change: String) throws {
        try make("a.token", "old\n")
        let changes = FileTransaction()
        try changes.write(secret: "new", to: path("a.token"))
        try changes.write(secret: "token", to: path("b.token"))
        switch change {
        case "appears": try make("b.token", "someone else's\n")
        case "replaced":
            try make("other", "someone else's\n")
            rename(path("other").path, path("a.token").path)
        case "becomes a symlink":
            unlink(path("a.token").path)
            symlink("/etc/hostname", path("a.token").path)
        default: unlink(path("a.token").path)
        }
        let before = snapshot()
        #expect(throws: ServiceError.self) { try changes.commit(environment: [:]) }
        #expect(snapshot() == before)
    }

    @Test func deletionsComeAfterTheConfigAndSkipAFileThatChanged() throws {
        var editor = try config(#"{"name": "blog", "posts": {"integration": "webfeed", "url": "https://example.org/feed"}}, {"name": "gone", "posts": {"integration": "webfeed", "url": "https://example.org/gone"}}"#)
        try editor.removeFeed(named: "gone", usage: "u", environment: [:])
        try make("gone.token", "old\n")
        try make("kept.token", "old\n")
        let changes = FileTransaction()
        changes.save(editor)
        changes.remove(path("gone.token"))
        changes.remove(path("kept.token"))
        changes.remove(path("never-there.token"))
        unlink(path("kept.token").path)
        try make("kept.token", "someone else's\n")
        let notes = try changes.commit(environment: [:])
        #expect(notes.count == 1 && notes[0].contains("kept.token"), "\(notes)")
        #expect(snapshot().keys.sorted() == ["feedsync.json", "kept.token"])
        #expect(!(snapshot()["feedsync.json"] ?? "").contains("gone"))
    }

    @Test func aDiscardedPlanLeavesNothing() throws {
        var editor = try config()
        try addFeed(&editor, "second")
        let before = snapshot()
        let changes = FileTransaction()
        try changes.write(secret: "token", to: path("a.token"))
        changes.save(editor)
        try changes.prepare(environment: [:])
        #expect(snapshot().count == before.count + 2, "a temporary secret and config: \(snapshot().keys.sorted())")
        changes.discard()
        #expect(snapshot() == before)
    }
}

extension FileTransactionTests {
    @Test func aConfigKeptAsItWasMustStillBeSoAtTheCommit() throws {
        let editor = try config()
        try make("a.token", "old\n")
        let changes = FileTransaction()
        try changes.write(secret: "new", to: path("a.token"))
        changes.keep(editor)
        try Data((try String(contentsOf: path("feedsync.json"), encoding: .utf8) + " ").utf8).write(to: path("feedsync.json"))
        let before = snapshot()
        #expect(throws: ServiceError.self) { try changes.commit(environment: [:]) }
        #expect(snapshot() == before)

        let unchanged = FileTransaction()
        try unchanged.write(secret: "new", to: path("a.token"))
        unchanged.keep(try ConfigEditor(configPath: path("feedsync.json").path, environment: [:]))
        try unchanged.commit(environment: [:])
        #expect(snapshot()["a.token"] == "new\n" && snapshot()["feedsync.json"] == before["feedsync.json"])
    }
}

extension FileTransactionTests {
    @Test func aFolderGoneBeforeTheCommitLeavesNoTemporaryFileOfTheOthers() throws {
        let sub = path("sub")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: false)
        var editor = try config()
        try addFeed(&editor, "second")
        let changes = FileTransaction()
        try changes.write(secret: "token", to: path("a.token"))
        try changes.write(secret: "app", to: sub.appendingPathComponent("a.token.app"))
        changes.save(editor)
        try FileManager.default.removeItem(at: sub)
        let before = snapshot()
        do {
            try changes.commit(environment: [:])
            Issue.record("committed into a folder that is gone")
        } catch let error as ServiceError {
            #expect(error.code == .storage && error.reason.contains("cannot create a file in \(sub.path)"), "\(error)")
        }
        #expect(snapshot() == before, "the first secret's temporary file is gone too")
    }

    @Test(.enabled(if: getuid() != 0, "root writes into any folder"))
    func aFolderThisUserCannotWriteLeavesNothing() throws {
        let locked = path("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: false)
        chmod(locked.path, 0o500)
        defer { chmod(locked.path, 0o700) }
        let changes = FileTransaction()
        try changes.write(secret: "token", to: path("a.token"))
        try changes.write(secret: "token", to: locked.appendingPathComponent("b.token"))
        let before = snapshot()
        #expect(throws: ServiceError.self) { try changes.commit(environment: [:]) }
        #expect(snapshot() == before)
    }
}
