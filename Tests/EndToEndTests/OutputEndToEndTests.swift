import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What `feedsync` does with its output: every write checked (exit 74 when output is lost),
/// `export --output` writing only where it may, and the text and dates it prints.
@Suite(.endToEnd) struct OutputEndToEndTests {
    func makeSyncedStore(posts: Int) async throws -> (ReferenceServer, Scratch, String) {
        let server = try ReferenceServer(posts: posts)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL)
        let pull = try await feedsync(["pull", "--config", config])
        #expect(pull.status == 0, "\(pull.stderr)")
        return (server, scratch, config)
    }

    /// Runs feedsync under bash: `setup`, then feedsync with `redirect` (`> /dev/full`, `>&-`).
    func feedsyncRedirected(_ arguments: [String], _ redirect: String, setup: String = "", in folder: URL? = nil) async throws -> Finished {
        try await run(URL(fileURLWithPath: "/bin/bash"),
                      ["-c", "\(setup)\nexec \"$0\" \"$@\" \(redirect)", binaries.appendingPathComponent("feedsync").path] + arguments,
                      environment: ["FEEDSYNC_PASSWORD": "demo", "FEEDSYNC_TEST_SHORT_INTERVALS": "1"], in: folder)
    }

    @Test func everyCommandExits74WithOneSentenceWhenItsOutputIsLost() async throws {
        let (server, scratch, config) = try await makeSyncedStore(posts: 200)
        defer { withExtendedLifetime(server) {} }
        let search = try await feedsync(["search", "sourdough", "--config", config])
        #expect(search.status == 0 && !search.stdout.isEmpty, "the search has matches to print: \(search.stderr)")
        let commands: [[String]] = [
            ["posts", "--config", config], ["posts", "--json", "--config", config], ["search", "sourdough", "--config", config],
            ["search", "sourdough", "--json", "--config", config], ["status", "--config", config], ["status", "--json", "--config", config],
            ["export", "--config", config], ["export", "--format", "csv", "--config", config], ["export", "--output", "-", "--config", config],
            ["config", "check", "--config", config], ["completion", "bash"], ["--help"], ["--version"], ["help", "pull"],
            ["read", "home/p0000001", "--config", config], ["pull", "--config", config], ["pull", "--json", "--config", config],
        ]
        for redirect in ["> /dev/full", ">&-"] {
            for command in commands {
                let result = try await feedsyncRedirected(command, redirect, in: scratch.folder)
                #expect(result.status == 74, "\(command) \(redirect): \(result.status) \(result.stderr)")
                let lines = result.stderr.split(separator: "\n")
                #expect(lines.count == 1 && lines[0].hasPrefix("feedsync: writing standard output failed: "),
                        "\(command) \(redirect): one sentence: \(result.stderr)")
            }
        }
        // With standard output closed, nothing printed may have landed in a file opened meanwhile.
        #expect(try await sqlite(scratch.database, "PRAGMA integrity_check") == "ok")
        #expect(try await feedsync(["posts", "--config", config]).status == 0)
    }

    @Test func aFullDiskExits74AndLeavesNoTruncatedFile() async throws {
        let (server, scratch, config) = try await makeSyncedStore(posts: 600)
        defer { withExtendedLifetime(server) {} }
        let folder = scratch.folder
        // The file size limit stands in for a full disk: writes past 64 KiB fail with EFBIG.
        let limit = "ulimit -f 64; trap '' XFSZ"
        let json = try await feedsyncRedirected(["posts", "--json", "--limit", "600", "--config", config], "> posts.json", setup: limit, in: folder)
        #expect(json.status == 74 && json.stderr.contains("writing standard output failed"), "\(json.stderr)")
        // feedsync ignores SIGXFSZ itself, so the limit alone is reported too, not a kill.
        let unsignalled = try await feedsyncRedirected(["posts", "--json", "--limit", "600", "--config", config], "> posts.json",
                                                       setup: "ulimit -f 64", in: folder)
        #expect(unsignalled.status == 74, "\(unsignalled.stderr)")

        let fresh = folder.appendingPathComponent("fresh.jsonl")
        let new = try await feedsyncRedirected(["export", "--config", config, "--output", fresh.path], "", setup: limit, in: folder)
        #expect(new.status == 74 && new.stderr.contains("writing \(fresh.path) failed"), "\(new.stderr)")
        #expect(!FileManager.default.fileExists(atPath: fresh.path), "no truncated export is left")

        let old = folder.appendingPathComponent("old.csv")
        try Data("kept\n".utf8).write(to: old)
        let replace = try await feedsyncRedirected(["export", "--config", config, "--format", "csv", "--output", old.path], "", setup: limit, in: folder)
        #expect(replace.status == 74)
        #expect(try String(contentsOf: old, encoding: .utf8) == "kept\n", "the file named is left as it was")
        let partial = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".partial") }
        #expect(partial.isEmpty, "\(partial)")

        let without = try await feedsyncRedirected(["export", "--config", config, "--output", fresh.path], "", in: folder)
        #expect(without.status == 0, "without the limit the same export works: \(without.stderr)")
    }

    @Test func aReaderThatGoesAwayEndsTheCommandQuietly() async throws {
        let (server, scratch, config) = try await makeSyncedStore(posts: 600)
        defer { withExtendedLifetime((server, scratch)) {} }
        // 600 posts are more than a pipe holds, so a write after `head` left must fail.
        let result = try await run(URL(fileURLWithPath: "/bin/bash"),
                                   ["-c", "\"$0\" export --config \"$1\" | head -c 1 > /dev/null; echo \"${PIPESTATUS[0]}\"",
                                    binaries.appendingPathComponent("feedsync").path, config])
        #expect(result.stdout == "74\n" && result.stderr.isEmpty, "\(result.stdout) \(result.stderr)")
    }

    @Test func exportWritesWhereItMayAndNowhereElse() async throws {
        let (server, scratch, config) = try await makeSyncedStore(posts: 300)
        defer { withExtendedLifetime(server) {} }
        let folder = scratch.folder
        let fm = FileManager.default
        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
        func lines(_ text: String) -> Int { text.split(separator: "\n").count }

        // A FIFO is written to as it is: its reader gets every line, and it stays a FIFO.
        #expect(mkfifo(path("fifo"), 0o600) == 0)
        let fifo = try await run(URL(fileURLWithPath: "/bin/bash"),
                                 ["-c", "timeout 60 cat fifo > received & \"$0\" export --config \"$1\" --output fifo; status=$?; wait; echo $status",
                                  binaries.appendingPathComponent("feedsync").path, config], in: folder)
        #expect(fifo.stdout == "0\n", "\(fifo.stderr)")
        #expect(lines(try String(contentsOfFile: path("received"), encoding: .utf8)) == 300)
        #expect(try fm.attributesOfItem(atPath: path("fifo"))[.type] as? FileAttributeType == .typeUnknown || isFIFO(path("fifo")))

        // A character device through a link, and /dev/stdout: written to, never replaced.
        try fm.createSymbolicLink(atPath: path("null"), withDestinationPath: "/dev/null")
        #expect(try await feedsync(["export", "--config", config, "--output", path("null")]).status == 0)
        #expect(try fm.destinationOfSymbolicLink(atPath: path("null")) == "/dev/null" && isCharacterDevice("/dev/null"))
        let stdout = try await feedsync(["export", "--config", config, "--output", "/dev/stdout"])
        #expect(stdout.status == 0 && lines(stdout.stdout) == 300, "\(stdout.stderr)")
        #expect(try fm.destinationOfSymbolicLink(atPath: "/dev/stdout") == "/proc/self/fd/1")
        // /dev/stdout is standard output itself: appended to as `>>` asked, and lost when it is closed.
        try Data("first\n".utf8).write(to: URL(fileURLWithPath: path("appended")))
        let appended = try await feedsyncRedirected(["export", "--config", config, "--output", "/dev/stdout"], ">> appended", in: folder)
        let kept = try String(contentsOfFile: path("appended"), encoding: .utf8)
        #expect(appended.status == 0 && kept.hasPrefix("first\n") && lines(kept) == 301, "\(appended.stderr)")
        let closed = try await feedsyncRedirected(["export", "--config", config, "--output", "/dev/stdout"], ">&-", in: folder)
        #expect(closed.status == 74, "\(closed.stderr)")
        let dash = try await feedsync(["export", "--config", config, "--output", "-"], in: folder)
        #expect(dash.status == 0 && lines(dash.stdout) == 300 && !fm.fileExists(atPath: path("-")))

        // A regular file is replaced whole and keeps its mode; through a link, the file it names.
        try Data("old\n".utf8).write(to: URL(fileURLWithPath: path("posts.jsonl")))
        #expect(chmod(path("posts.jsonl"), 0o600) == 0)
        try fm.createSymbolicLink(atPath: path("latest"), withDestinationPath: "posts.jsonl")
        #expect(try await feedsync(["export", "--config", config, "--output", "latest"], in: folder).status == 0)
        #expect(try fm.destinationOfSymbolicLink(atPath: path("latest")) == "posts.jsonl")
        #expect(lines(try String(contentsOfFile: path("posts.jsonl"), encoding: .utf8)) == 300)
        #expect((try fm.attributesOfItem(atPath: path("posts.jsonl"))[.posixPermissions] as? Int) == 0o600)

        // A directory is refused.
        try fm.createDirectory(atPath: path("sub"), withIntermediateDirectories: false)
        let directory = try await feedsync(["export", "--config", config, "--output", "sub"], in: folder)
        #expect(directory.status == 64 && directory.stderr.contains("is a directory"), "\(directory.stderr)")

        // The store and its side files, however they are named, are refused and left untouched.
        try fm.createSymbolicLink(atPath: path("alias"), withDestinationPath: "feedsync.sqlite")
        try fm.createSymbolicLink(atPath: path("here"), withDestinationPath: folder.path)
        #expect(link(path("feedsync.sqlite"), path("hard")) == 0)
        try Data().write(to: URL(fileURLWithPath: path("feedsync.sqlite.sessions")))
        let before = databaseBytes(scratch)
        // The pull above made the account's sessions file; what no export may make is what is not there yet.
        let absent = ["feedsync.sqlite-journal", "feedsync.sqlite.sessions.sqlite", "feedsync.sqlite.sessions.sqlite-wal",
                      "feedsync.sqlite.sessions.sqlite-journal"].filter { !fm.fileExists(atPath: path($0)) }
        let names = ["feedsync.sqlite", "./feedsync.sqlite", path("feedsync.sqlite"), "sub/../feedsync.sqlite", "alias", "hard",
                     "here/feedsync.sqlite", "feedsync.sqlite-wal", "feedsync.sqlite-shm", "here/feedsync.sqlite-journal",
                     "sub/../feedsync.sqlite.lock", "feedsync.sqlite.daemon.lock", "feedsync.sqlite.sessions",
                     "feedsync.sqlite.sessions.sqlite", "feedsync.sqlite.sessions.sqlite-wal"]
        for name in names {
            let result = try await feedsync(["export", "--config", config, "--output", name], in: folder)
            #expect(result.status == 64 && result.stderr.contains("the store or one of its side files"), "\(name): \(result.stderr)")
        }
        #expect(databaseBytes(scratch) == before)
        for created in absent {
            #expect(!fm.fileExists(atPath: path(created)), "\(created) was made by an export")
        }
        #expect(try await feedsync(["posts", "--config", config]).status == 0)
    }

    @Test func controlCharactersAreEscapedAndOldDatesPrintInTheGregorianCalendar() async throws {
        let (server, scratch, config) = try await makeSyncedStore(posts: 50)
        defer { withExtendedLifetime(server) {} }
        // 1500-03-01 and 0000-01-01 (proleptic Gregorian), in milliseconds since 1970.
        _ = try await sqlite(scratch.database, """
            UPDATE posts SET created_at = -14826672000000,
                text = 'red ' || char(27) || '[31m bell' || char(7) || ' csi ' || char(155) || '2J, "quoted"' || char(10) || 'zebrafinch'
                WHERE id = 'p0000001';
            UPDATE posts SET created_at = -62167219200000 WHERE id = 'p0000002';
            """)
        let csv = try await feedsync(["export", "--config", config, "--format", "csv"])
        #expect(csv.status == 0, "\(csv.stderr)")
        let raw = csv.stdout.unicodeScalars.filter { ($0.value < 0x20 && $0 != "\r" && $0 != "\n") || (0x7F...0x9F).contains($0.value) }
        #expect(raw.isEmpty, "no raw control character: \(raw.map(\.value))")
        #expect(csv.stdout.split(separator: "\r\n").count == 51, "one line per row")
        #expect(csv.stdout.contains(#"home,p0000001,1500-03-01T00:00:00Z,"#))
        #expect(csv.stdout.contains(#""red \u{1b}[31m bell\u{7} csi \u{9b}2J, ""quoted""\nzebrafinch""#), "\(csv.stdout.prefix(2000))")
        #expect(csv.stdout.contains(#"home,p0000002,0000-01-01T00:00:00Z,"#))

        let jsonl = try await feedsync(["export", "--config", config])
        #expect(jsonl.stdout.contains(#""createdAt":"1500-03-01T00:00:00Z""#) && jsonl.stdout.contains(#""createdAt":"0000-01-01T00:00:00Z""#))
        #expect(jsonl.stdout.contains(#"red \u001b[31m bell\u0007 csi \u009b2J, \"quoted\"\nzebrafinch"#))
        let records = jsonl.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(records.contains { $0["text"] as? String == "red \u{1B}[31m bell\u{07} csi \u{9B}2J, \"quoted\"\nzebrafinch" })

        let posts = try await feedsync(["posts", "--config", config, "--limit", "100"])
        #expect(posts.stdout.contains("home/p0000001  1500-03-01T00:00:00Z") && posts.stdout.contains("home/p0000002  0000-01-01T00:00:00Z"),
                "\(posts.stdout.suffix(600))")
        let postsJSON = try await feedsync(["posts", "--json", "--config", config, "--limit", "100"])
        #expect(postsJSON.stdout.contains(#""createdAt" : "1500-03-01T00:00:00Z""#))
        let search = try await feedsync(["search", "zebrafinch", "--config", config])
        #expect(search.stdout.hasPrefix("home/p0000001  1500-03-01T00:00:00Z"), "\(search.stdout) \(search.stderr)")
    }

    func isFIFO(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO
    }

    func isCharacterDevice(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFCHR
    }
}
