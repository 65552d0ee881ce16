import Core
import Foundation
@testable import SQLiteCache
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The private sessions database beside the store: one row per account, the old per-feed JSON
/// file moved in and removed, and never a file it did not make.
@Suite struct SessionDatabaseTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-sessions-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func path(_ name: String = "s.sqlite") -> String { folder.appendingPathComponent(name).path }

    @Test func anOlderSessionsFileMovesInAndIsRemoved() async throws {
        let path = path()
        let json = """
            {"version": 1, "sessions": {
              "home": {"backend": "httpapi https://api.example user ada", "accessToken": "JSON-ACCESS-1", "refreshToken": "JSON-REFRESH-1", "expiresAt": 1900000000000},
              "news": {"backend": "bluesky https://pds.example as ada timeline home", "accessToken": "JSON-ACCESS-2"}}}
            """
        try Data(json.utf8).write(to: URL(fileURLWithPath: path + ".sessions"))

        let store = SQLiteFeedStore(path: path)
        try await store.open()
        _ = try await store.feedStatuses()
        #expect(FileManager.default.fileExists(atPath: path + ".sessions"), "opening and reading the store touches no session")
        #expect(!FileManager.default.fileExists(atPath: path + ".sessions.sqlite"))

        let home = try await store.takeFormerSession(ofFeed: "home", backend: "httpapi https://api.example user ada")

        #expect(!FileManager.default.fileExists(atPath: path + ".sessions"))
        let mode = try FileManager.default.attributesOfItem(atPath: path + ".sessions.sqlite")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(home == Session(accessToken: Secret("JSON-ACCESS-1"), refreshToken: Secret("JSON-REFRESH-1"),
                                expiresAt: Date(timeIntervalSince1970: 1_900_000_000)))
        #expect(try await store.takeFormerSession(ofFeed: "home", backend: "httpapi https://api.example user ada") == nil)
        #expect(try await store.takeFormerSession(ofFeed: "news", backend: "bluesky https://pds.example as bob timeline home") == nil,
                "another backend's session is not handed over")
        var bytes = Data()
        for file in [path, path + "-wal"] { bytes.append(FileManager.default.contents(atPath: file) ?? Data()) }
        #expect(bytes.range(of: Data("JSON-ACCESS-1".utf8)) == nil, "tokens never reach the mirror")
        await store.close()
    }

    @Test func savingOneAccountLeavesTheOthersAsTheyAre() async throws {
        let path = path()
        let store = SQLiteFeedStore(path: path)
        try await store.open()
        let accounts = (0..<300).map { AccountKey(integration: "httpapi", server: "https://api.example", account: "user\($0)") }
        for account in accounts { try await store.saveSession(Session(accessToken: Secret("t-\(account.account)")), of: account) }

        try await store.saveSession(Session(accessToken: Secret("renewed")), of: accounts[7])

        let other = SQLiteFeedStore(path: path)
        try await other.open()
        #expect(try await other.session(of: accounts[7])?.accessToken.revealed == "renewed")
        #expect(try await other.session(of: accounts[8])?.accessToken.revealed == "t-user8")
        #expect(try await other.session(of: accounts[299])?.accessToken.revealed == "t-user299")
        #expect(!FileManager.default.fileExists(atPath: path + ".sessions.sqlite-journal"), "no side file keeps tokens after a save")
    }

    @Test func aSymbolicLinkOrASecondNameInPlaceOfTheSessionsFileIsRefused() async throws {
        let target = path("elsewhere")
        #expect(FileManager.default.createFile(atPath: target, contents: Data()))
        let linked = path("linked.sqlite")
        try FileManager.default.createSymbolicLink(atPath: linked + ".sessions.sqlite", withDestinationPath: target)
        let hardLinked = path("hard.sqlite")
        #expect(link(target, hardLinked + ".sessions.sqlite") == 0)
        let account = AccountKey(integration: "httpapi", server: "s", account: "a")

        for database in [linked, hardLinked] {
            let store = SQLiteFeedStore(path: database)
            try await store.open()
            let error = await #expect(throws: ServiceError.self) { try await store.saveSession(Session(accessToken: Secret("t")), of: account) }
            #expect(error?.code == .storage && error?.operation.contains(".sessions.sqlite") == true)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)).isEmpty, "nothing was written through the link")
    }

    @Test func aStoreThatNeverLogsInMakesNoSessionsFile() async throws {
        let path = path()
        let store = SQLiteFeedStore(path: path)
        try await store.open()
        #expect(try await store.session(of: AccountKey(integration: "httpapi", server: "s", account: "a")) == nil)
        #expect(!FileManager.default.fileExists(atPath: path + ".sessions.sqlite"))
    }
}
