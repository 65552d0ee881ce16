import Foundation
import Testing

/// `feedsync serve-user add/remove/list` as real processes over a real SQLite file: the password
/// read as a line of standard input, only its argon2id hash stored, removal revoking tokens.
@Suite(.endToEnd, .serialized) struct ServeUserEndToEndTests {
    @Test func accountsAreAddedListedAndRemovedKeepingOnlyAHash() async throws {
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: "http://127.0.0.1:9")
        // Before any pull: `add` makes the store.
        let added = try await feedsync(["serve-user", "add", "ada", "--config", config], input: "correct horse battery\n")
        #expect(added.status == 0 && added.stdout == "reader account ada added\n", "\(added.stderr)")
        #expect(try await feedsync(["serve-user", "add", "bob.r@home", "--config", config], input: "another secret\n").status == 0)

        let hash = try await sqlite(scratch.sessions, "SELECT password_hash FROM serve_users WHERE name = 'ada'")
        #expect(hash.hasPrefix("$argon2id$v=19$"), "\(hash)")
        let database = try Data(contentsOf: scratch.database) + ((try? Data(contentsOf: URL(fileURLWithPath: scratch.database.path + "-wal"))) ?? Data())
            + (try Data(contentsOf: scratch.sessions))
        #expect(database.range(of: Data("correct horse battery".utf8)) == nil, "the password is in no file")
        let mirror = try Data(contentsOf: scratch.database)
        #expect(mirror.range(of: Data(hash.utf8)) == nil, "the hash is not in the mirror")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'serve%'") == "0")

        let listed = try await feedsync(["serve-user", "list", "--config", config])
        let lines = listed.stdout.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].hasPrefix("ada  added 20") && lines[0].hasSuffix("0 live tokens"), "\(listed.stdout)")
        #expect(lines.last?.hasPrefix("bob.r@home  added ") == true)

        let twice = try await feedsync(["serve-user", "add", "ada", "--config", config], input: "a different one\n")
        #expect(twice.status == 64 && twice.stderr.contains("exists already"), "\(twice.stderr)")
        #expect(try await sqlite(scratch.sessions, "SELECT password_hash FROM serve_users WHERE name = 'ada'") == hash)

        // A token handed out at a login (written as the listener writes it) goes with its account.
        try await _ = sqlite(scratch.sessions, "INSERT INTO serve_tokens (token_hash, name, created_at, expires_at) VALUES ('digest', 'ada', 0, 99999999999999)")
        #expect(try await feedsync(["serve-user", "list", "--config", config]).stdout.hasPrefix("ada  added 20"))
        let removed = try await feedsync(["serve-user", "remove", "ada", "--config", config])
        #expect(removed.stdout == "reader account ada removed; its tokens are revoked\n", "\(removed.stderr)")
        #expect(try await sqlite(scratch.sessions, "SELECT COUNT(*) FROM serve_tokens") == "0")
        let again = try await feedsync(["serve-user", "remove", "ada", "--config", config])
        #expect(again.status == 66 && again.stderr.split(separator: "\n").count == 1, "\(again.stderr)")
        #expect(try await feedsync(["serve-user", "list", "--config", config]).stdout.split(separator: "\n").count == 1)
    }

    @Test func aFeedTokenIsMadeListedAndRevoked() async throws {
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: "http://127.0.0.1:9")
        #expect(try await feedsync(["serve-user", "add", "ada", "--config", config], input: "correct horse battery\n").status == 0)
        let made = try await feedsync(["serve-user", "token", "ada", "home", "--config", config])
        let lines = made.stdout.split(separator: "\n").map(String.init)
        #expect(made.status == 0 && lines.count == 2 && lines[0].hasPrefix("/feeds/home.atom?token=") && lines[1].hasPrefix("/feeds/home.json?token="),
                "\(made.stdout) \(made.stderr)")
        let token = String(lines.first?.split(separator: "=").last ?? "")
        #expect(token.count == 64)
        let stored = try await sqlite(scratch.sessions, "SELECT token_hash || ' ' || feed FROM serve_tokens")
        #expect(stored.hasSuffix(" home") && !stored.contains(token), "only the token's digest is kept: \(stored)")
        let listed = try await feedsync(["serve-user", "list", "--config", config])
        #expect(listed.stdout.contains("\n  feed token for home  made 20"), "\(listed.stdout)")
        #expect(!listed.stdout.contains(token))

        let unknown = try await feedsync(["serve-user", "token", "ada", "nothing-served", "--config", config])
        #expect(unknown.status == 64 && unknown.stderr.contains("is not served"), "\(unknown.stderr)")
        let nobody = try await feedsync(["serve-user", "token", "bob", "home", "--config", config])
        #expect(nobody.status == 66 && nobody.stderr.contains("no reader account bob"), "\(nobody.stderr)")
        let revoked = try await feedsync(["serve-user", "revoke", "ada", "home", "--config", config])
        #expect(revoked.status == 0 && revoked.stdout == "1 token of ada for home revoked\n", "\(revoked.stderr)")
        #expect(try await feedsync(["serve-user", "revoke", "ada", "home", "--config", config]).status == 66)
        #expect(try await sqlite(scratch.sessions, "SELECT COUNT(*) FROM serve_tokens") == "0")
    }

    @Test(arguments: [
        (["serve-user", "add"], "", "give exactly one account NAME"),
        (["serve-user", "add", "a b"], "long enough password\n", "is not 1 to 64"),
        (["serve-user", "add", String(repeating: "x", count: 65)], "long enough password\n", "is not 1 to 64"),
        (["serve-user", "add", "ada\u{1b}[2J"], "long enough password\n", "is not 1 to 64"),
        (["serve-user", "add", "ada"], "", "no password given"),
        (["serve-user", "add", "ada"], "short\n", "must be 8 to 1024 bytes"),
        (["serve-user", "add", "ada"], String(repeating: "p", count: 1_025) + "\n", "must be 8 to 1024 bytes"),
        (["serve-user", "list", "extra"], "", "takes no arguments"),
        (["serve-user", "remove"], "", "give exactly one account NAME"),
        (["serve-user", "token", "ada"], "", "give an account NAME and a FEED"),
        (["serve-user", "token", "a b", "home"], "", "is not 1 to 64"),
        (["serve-user", "revoke", "ada", "ho\u{1b}me"], "", "is not a served feed's name"),
    ])
    func badInputExits64WithOneSentence(_ arguments: [String], _ input: String, _ says: String) async throws {
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: "http://127.0.0.1:9")
        let result = try await feedsync(arguments + ["--config", config], input: input)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(says) && !result.stderr.contains("\u{1b}"), "\(result.stderr)")
        if FileManager.default.fileExists(atPath: scratch.sessions.path) {
            #expect(try await sqlite(scratch.sessions, "SELECT COUNT(*) FROM serve_users") == "0")
        }
    }
}
