import Foundation
import Testing

/// `search`, `export` and the command line's conveniences, against a synced store.
@Suite(.endToEnd) struct SearchExportTests {
    /// A store synced from the reference server, and its config.
    func makeSyncedStore(posts: Int = 600) async throws -> (ReferenceServer, Scratch, String) {
        let server = try ReferenceServer(posts: posts)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL)
        let pull = try await feedsync(["pull", "--config", config])
        #expect(pull.status == 0, "\(pull.stderr)")
        return (server, scratch, config)
    }

    @Test func searchFindsWhatSQLFindsBestFirstWithoutASecret() async throws {
        let (server, scratch, config) = try await makeSyncedStore()
        defer { withExtendedLifetime(server) {} }
        let expected = Int(try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts WHERE text LIKE '%sourdough%'")) ?? -1
        #expect(expected > 0)

        let result = try await feedsync(["search", "sourdough", "--config", config, "--limit", "10000", "--json"], environment: [:])
        #expect(result.status == 0, "\(result.stderr)")
        let matches = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(matches.count == expected)
        let ranks = matches.compactMap { $0["rank"] as? Double }
        #expect(ranks == ranks.sorted(), "best matches first")
        #expect(matches.allSatisfy { ($0["snippet"] as? String)?.lowercased().contains("**sourdough**") == true })

        let text = try await feedsync(["search", "sourdough", "--config", config, "--limit", "2"], environment: [:])
        #expect(text.stdout.split(separator: "\n").count == 4 && text.stdout.hasPrefix("home/p"), "\(text.stdout)")
        let phrase = try await feedsync(["search", "\"sourdough sourdough\" OR zürich", "--config", config, "--json"], environment: [:])
        #expect(phrase.status == 0, "\(phrase.stderr)")
        let bad = try await feedsync(["search", "AND AND", "--config", config], environment: [:])
        #expect(bad.status == 64 && bad.stderr.contains("the search query \"AND AND\" cannot be read at"), "\(bad.stderr)")
        let none = try await feedsync(["search", "sourdough", "--feed", "nope", "--config", config], environment: [:])
        #expect(none.status == 64, "\(none.stderr)")
    }

    @Test func theIndexFollowsEditsAndDeletions() async throws {
        let (server, scratch, config) = try await makeSyncedStore(posts: 100)
        // The server appends " [edit 1]" to an edited post's text.
        for id in ["p0000042", "p0000043", "p0000044"] { try await server.control("POST", "/_control/edit?id=\(id)") }
        for id in ["p0000007", "p0000043"] { try await server.control("POST", "/_control/delete?id=\(id)") }
        #expect(try await feedsync(["pull", "--config", config]).status == 0)

        let edited = try await feedsync(["search", "edit", "--config", config, "--json"], environment: [:])
        let hits = try JSONSerialization.jsonObject(with: Data(edited.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(Set(hits.compactMap { ($0["post"] as? [String: Any])?["id"] as? String }) == ["p0000042", "p0000044"], "\(edited.stdout)")
        let deleted = try await sqlite(scratch.database, "SELECT text FROM posts WHERE id = 'p0000007'")
        #expect(deleted.isEmpty)
        #expect(try await sqlite(scratch.database, "INSERT INTO posts_fts(posts_fts, rank) VALUES('integrity-check', 1); SELECT 'ok'") == "ok")
    }

    @Test func exportStreamsEveryPostInAStableOrder() async throws {
        let (server, scratch, config) = try await makeSyncedStore()
        defer { withExtendedLifetime(server) {} }
        let lines = try await feedsync(["export", "--config", config], environment: [:])
        #expect(lines.status == 0, "\(lines.stderr)")
        let records = lines.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(records.count == 600)
        #expect(records.first?["author"] as? [String: Any] != nil && records.first?["videos"] != nil)
        #expect(try await feedsync(["export", "--config", config], environment: [:]).stdout == lines.stdout, "the same order every time")

        let csvFile = scratch.folder.appendingPathComponent("posts.csv")
        let csv = try await feedsync(["export", "--config", config, "--format", "csv", "--output", csvFile.path], environment: [:])
        #expect(csv.status == 0 && csv.stdout.isEmpty)
        let rows = try String(contentsOf: csvFile, encoding: .utf8).split(separator: "\r\n")
        #expect(rows.count == 601 && rows[0].hasPrefix("feed,id,created_at"))

        let since = try await feedsync(["export", "--config", config, "--since", "2026-01-01T03:00:00Z"], environment: [:])
        let expected = try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts WHERE created_at >= 1767236400000")
        #expect(String(since.stdout.split(separator: "\n").count) == expected)
        let badFormat = try await feedsync(["export", "--config", config, "--format", "xml"], environment: [:])
        #expect(badFormat.status == 64)
    }

    @Test func theCommandLineBehavesAsPeopleExpect() async throws {
        let (server, scratch, config) = try await makeSyncedStore(posts: 20)
        defer { withExtendedLifetime((server, scratch)) {} }
        let typo = try await feedsync(["pul", "--config", config])
        #expect(typo.status == 64 && typo.stderr.contains("did you mean \"pull\"?"), "\(typo.stderr)")
        #expect(!typo.stderr.contains("Commands:"), "one sentence and the usage, not the whole help")
        let twoWords = try await feedsync(["config", "chek"])
        #expect(twoWords.stderr.contains("did you mean \"config check\"?"), "\(twoWords.stderr)")
        // A group's name alone lists its commands: on stderr with 64, or asked for with --help, on stdout with 0.
        let group = try await feedsync(["media"])
        #expect(group.status == 64 && group.stderr.contains("\"media\" needs one of its commands")
                && group.stderr.contains("usage: feedsync media status|fetch|prune") && group.stderr.contains("  media prune  "), "\(group.stderr)")
        let groupHelp = try await feedsync(["serve-user", "--help"])
        #expect(groupHelp.status == 0 && groupHelp.stdout.hasPrefix("usage: feedsync serve-user add|remove|list"), "\(groupHelp.stdout)")

        for help in [["help", "pull"], ["pull", "-h"], ["pull", "--help"]] {
            let result = try await feedsync(help)
            #expect(result.status == 0 && result.stdout.hasPrefix("usage: feedsync pull"), "\(help): \(result.stdout)")
        }
        for version in [["-V"], ["--version"], ["status", "-V"]] {
            #expect(try await feedsync(version).stdout.hasPrefix("feedsync "), "\(version)")
        }
        let before = try await feedsync(["--config", config, "status"], environment: [:])
        #expect(before.status == 0 && before.stdout.contains("posts:        20"), "\(before.stderr)")

        let json = try await feedsync(["pull", "--config", config, "--json"])
        let outcomes = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(outcomes?.first?["feed"] as? String == "home" && outcomes?.first?["new"] as? Int == 0, "\(json.stdout)")
        let empty = try await feedsync(["search", "nothingmatchesthis", "--config", config, "--json"], environment: [:])
        #expect(empty.stdout == "[]\n", "\(empty.stdout)")

        let bash = try await feedsync(["completion", "bash"])
        #expect(bash.status == 0 && bash.stdout.contains("complete -F _feedsync feedsync"))
        let check = try await run(URL(fileURLWithPath: "/bin/bash"), ["-n", "-c", bash.stdout])
        #expect(check.status == 0, "the bash script parses: \(check.stderr)")
        #expect(try await feedsync(["completion", "fish"]).stdout.contains("-a 'search'"))
        #expect(try await feedsync(["completion", "tcsh"]).status == 64)
    }
}
