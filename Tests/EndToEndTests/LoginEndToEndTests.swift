import Foundation
import ProcessTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A `feedsync` that waits for a person: its output read while it runs, its input written to.
final class InteractiveProcess: @unchecked Sendable {
    // @unchecked: `process` and `input` are set once; the output goes through `collected`, which locks.
    let process = Process()
    private let input = makePipe()
    private let collected = OutputBuffer()

    final class OutputBuffer: Sendable {
        let data = Mutex((out: Data(), err: Data()))
        /// Whether each pipe has reached its end: everything the process wrote has been read.
        let ended = Mutex((out: false, err: false))
    }

    init(_ arguments: [String], in folder: URL, environment: [String: String] = [:]) throws {
        let out = makePipe(), err = makePipe()
        process.executableURL = binaries.appendingPathComponent("feedsync")
        process.arguments = arguments
        process.currentDirectoryURL = folder
        var env = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        env["DISPLAY"] = nil
        env["WAYLAND_DISPLAY"] = nil
        process.environment = env
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try launch(process)
        // Each pipe is read on a thread of its own until its end, a block at a time, so what the
        // process printed is there while it runs and known whole once both ends are reached. (A
        // readabilityHandler was not told of the end on Linux: every wait for it ran out.)
        for (pipe, isOut) in [(out, true), (err, false)] {
            let handle = pipe.fileHandleForReading
            Thread.detachNewThread { [collected] in
                while case let data = handle.availableData, !data.isEmpty {
                    collected.data.withLock { isOut ? $0.out.append(data) : $0.err.append(data) }
                }
                // Foundation keeps every Process and its pipes for the test process's life:
                // the read end is closed here, or each sign-in would leave a descriptor open.
                try? handle.close()
                collected.ended.withLock { if isOut { $0.out = true } else { $0.err = true } }
            }
        }
    }

    /// A test that ends early (a failed expectation) leaves no sign-in waiting for minutes.
    deinit { if process.isRunning { process.terminate() } }

    var stdout: String { String(decoding: collected.data.withLock { $0.out }, as: UTF8.self) }
    var stderr: String { String(decoding: collected.data.withLock { $0.err }, as: UTF8.self) }

    /// The first printed line that starts with `prefix` (after indentation), once it is there.
    func line(startingWith prefix: String, within seconds: Double = patience) async throws -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        func found() -> String? {
            stdout.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }).first(where: { $0.hasPrefix(prefix) })
        }
        while Date() < deadline {
            if let line = found() { return line }
            if !process.isRunning {
                // What it printed before it ended may still be on its way from the pipe.
                try await drained()
                return found()
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return found()
    }

    /// Waits until both pipes have reached their end, so `stdout` and `stderr` are whole.
    func drained() async throws {
        let deadline = Date().addingTimeInterval(patience)
        while !collected.ended.withLock({ $0.out && $0.err }) && Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func type(_ text: String) { input.fileHandleForWriting.write(Data(text.utf8)) }

    /// The exit status, once the process ends (killed after `seconds`).
    ///
    /// Polled with sleeps: `waitUntilExit()` would hold one of the test run's few cooperative
    /// threads, and with several sign-ins waiting at once it starved every other test.
    ///
    /// Returns once its output is read to the end too: the process can exit before the handlers
    /// have been handed its last lines, and a test reading `stderr` then would see none.
    func status(within seconds: Double = patience) async throws -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning { process.terminate() }
        while process.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        try await drained()
        return process.terminationStatus
    }
}

/// `feedsync login`, `logout` against the fake Mastodon server's OAuth endpoints (written from
/// Mastodon's documentation, checking PKCE and redirect_uri) and the fake Bluesky service.
@Suite(.endToEnd) struct LoginEndToEndTests {
    func mastodon(_ mode: String = "normal") async throws -> ReferenceServer { try await mastodonFixture(mode) }

    func get(_ url: String) async throws -> Finished { try await httpGet(url) }

    func files(_ scratch: Scratch) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: scratch.folder.path)) ?? []).sorted()
    }

    @Test func aLoopbackLoginStoresTheTokenInA0600FileAndAddsAHomeFeedThatPullsExactly() async throws {
        let server = try await mastodon()
        let scratch = try Scratch()
        let login = try InteractiveProcess(["login", "mastodon", server.baseURL, "--callback"], in: scratch.folder)
        let authorize = try #require(try await login.line(startingWith: "http://127.0.0.1:\(server.port)/oauth/authorize"), "\(login.stdout)\(login.stderr)")
        #expect(authorize.contains("code_challenge_method=S256") && authorize.contains("state="))
        let callback = try await consent(authorize)
        #expect(callback.hasPrefix("http://127.0.0.1:") && callback.contains("/callback?code="), "\(callback)")
        let page = try await get(callback)
        #expect(page.stdout.hasPrefix("HTTP/1.1 200") && page.stdout.contains("Signed in"), "\(page.stdout)")
        #expect(try await login.status() == 0, "\(login.stdout)\(login.stderr)")
        #expect(login.stdout.contains("logged in as @ada@127.0.0.1"), "\(login.stdout)")

        let oauth = try await server.control("GET", "/_control/oauth")
        let token = try #require((oauth["tokens"] as? [String])?.first)
        let config = try String(contentsOf: scratch.folder.appendingPathComponent("feedsync.json"), encoding: .utf8)
        #expect(!config.contains(token) && !login.stdout.contains(token) && !login.stderr.contains(token), "the token is only in its file")
        #expect(config.contains(#""accessTokenFile": "ada-127.0.0.1.token""#), "\(config)")
        let tokenFile = scratch.folder.appendingPathComponent("ada-127.0.0.1.token")
        #expect(try String(contentsOf: tokenFile, encoding: .utf8) == token + "\n")
        var info = stat()
        #expect(lstat(tokenFile.path, &info) == 0 && info.st_mode & 0o777 == 0o600)

        let pull = try await feedsync(["pull", "--config", scratch.folder.appendingPathComponent("feedsync.json").path])
        #expect(pull.status == 0, "\(pull.stderr)")
        let home = try await server.control("GET", "/_control/timeline?name=home")["ids"] as? [String] ?? []
        let stored = try await sqlite(scratch.database, "SELECT id FROM posts ORDER BY CAST(id AS INTEGER) DESC").split(separator: "\n").map(String.init)
        #expect(stored == home && !home.isEmpty)

        // A second feed, so the login's can go; logout revokes the token and keeps the posts.
        let second = try InteractiveProcess(["login", "mastodon", server.baseURL, "--paste", "--name", "second"], in: scratch.folder)
        let again = try #require(try await second.line(startingWith: "http://127.0.0.1:\(server.port)/oauth/authorize"))
        let secondPage = try await get(again).stdout
        let secondCode = try #require(secondPage.range(of: #"value="([^"]+)""#, options: .regularExpression).map { String(secondPage[$0].dropFirst(7).dropLast()) })
        second.type(secondCode + "\n")
        #expect(try await second.status() == 0, "\(second.stderr)")
        let logout = try await feedsync(["logout", "ada-127.0.0.1", "--config", scratch.folder.appendingPathComponent("feedsync.json").path])
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect((try await server.control("GET", "/_control/oauth")["revoked"] as? [String]) == [token])
        #expect(!FileManager.default.fileExists(atPath: tokenFile.path))
        #expect(try await sqlite(scratch.database, "SELECT count(*) FROM posts") == "\(home.count)", "the posts stay")
    }

    @Test func aPastedCodeLogsInOnAServerWithoutABrowser() async throws {
        let server = try await mastodon()
        let scratch = try Scratch()
        let login = try InteractiveProcess(["login", "mastodon", server.baseURL, "--name", "me", "--no-feed"], in: scratch.folder)
        let authorize = try #require(try await login.line(startingWith: "http://127.0.0.1:\(server.port)/oauth/authorize"), "\(login.stdout)\(login.stderr)")
        #expect(authorize.contains("redirect_uri=urn:ietf:wg:oauth:2.0:oob") || authorize.contains("redirect_uri=urn%3Aietf"))
        let page = try await get(authorize).stdout
        let code = try #require(page.range(of: #"value="([^"]+)""#, options: .regularExpression).map { String(page[$0].dropFirst(7).dropLast()) })
        login.type(code + "\n")
        #expect(try await login.status() == 0, "\(login.stdout)\(login.stderr)")
        #expect(FileManager.default.fileExists(atPath: scratch.folder.appendingPathComponent("me.token").path))
        #expect(!FileManager.default.fileExists(atPath: scratch.folder.appendingPathComponent("feedsync.json").path), "--no-feed writes no config")
    }

    @Test func forgedCallbacksAreAnswered400AndTheSignInWaitsForTheRealOne() async throws {
        let server = try await mastodon()
        let scratch = try Scratch()
        let login = try InteractiveProcess(["login", "mastodon", server.baseURL, "--callback"], in: scratch.folder)
        let authorize = try #require(try await login.line(startingWith: "http://127.0.0.1:\(server.port)/oauth/authorize"), "\(login.stdout)\(login.stderr)")
        let callback = try await consent(authorize)
        let loopback = try #require(callback.components(separatedBy: "?").first)
        let state = try #require(callback.range(of: #"state=[^&]+"#, options: .regularExpression).map { String(callback[$0]) })
        for query in ["code=forged", "error=access_denied", "error=access_denied&error_description=gone", "state=someone-elses&code=forged",
                      "state=someone-elses&error=access_denied", "\(state)&state=someone-elses&error=access_denied", "state=&code=forged"] {
            let answer = try await get("\(loopback)?\(query)").stdout
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(query): \(answer)")
            #expect(login.process.isRunning, "\(query) did not end the sign-in")
        }
        let page = try await get(callback)
        #expect(page.stdout.hasPrefix("HTTP/1.1 200") && page.stdout.contains("Signed in"), "\(page.stdout)")
        #expect(try await login.status() == 0, "\(login.stdout)\(login.stderr)")
        #expect(login.stdout.contains("logged in as @ada@127.0.0.1") && login.stderr.isEmpty, "\(login.stdout)\(login.stderr)")
        #expect((try await get(callback)).stdout.isEmpty, "the listener is gone once the sign-in ended")
    }

    @Test(arguments: [("deny", Int32(77), "refused the sign-in"), ("refuse-code", Int32(77), "invalid_grant"),
                      ("token-redirect", Int32(69), "redirected a POST request"), ("no-apps", Int32(69), "does not register applications"),
                      ("bad-token", Int32(77), "answered 401")])
    func aServerThatRefusesOrMisbehavesIsOneSentenceAndNothingIsStored(_ mode: String, _ status: Int32, _ words: String) async throws {
        let server = try await mastodon(mode)
        let scratch = try Scratch()
        let login = try InteractiveProcess(["login", "mastodon", server.baseURL, "--callback"], in: scratch.folder)
        if let authorize = try await login.line(startingWith: "http://127.0.0.1:\(server.port)/oauth/authorize") {
            _ = try await get(try await consent(authorize))
        }
        #expect(try await login.status() == status, "\(login.stdout)\(login.stderr)")
        #expect(login.stderr.contains(words), "\(login.stderr)")
        #expect(login.stderr.split(separator: "\n").count == 1, "one sentence: \(login.stderr)")
        #expect(files(scratch).isEmpty, "\(files(scratch))")
    }

    @Test func anExistingTokenFileOthersCanReadOrASymlinkIsRefusedBeforeTheSignIn() async throws {
        let server = try await mastodon()
        let scratch = try Scratch()
        let readable = scratch.folder.appendingPathComponent("open.token")
        try Data("old\n".utf8).write(to: readable)
        chmod(readable.path, 0o644)
        let link = scratch.folder.appendingPathComponent("link.token")
        symlink("/etc/hostname", link.path)
        let before = snapshot(scratch.folder)
        for (file, words) in [(readable, "can be read by others"), (link, "is a symlink")] {
            let login = try await pasteLogin(server, in: scratch.folder, ["--no-feed", "--token-file", file.path])
            #expect(login.process.terminationStatus == 65, "\(login.stderr)")
            #expect(login.stderr.contains(words), "\(login.stderr)")
            #expect(!login.stdout.contains("/oauth/authorize"), "refused before any sign-in")
        }
        #expect(snapshot(scratch.folder) == before)
        #expect(try await server.oauthLedger().apps == 0, "no app was registered")
    }

    @Test func aBlueskyLoginChecksTheAppPasswordAndItsSessionIsTheFirstPullsSession() async throws {
        let server = try ReferenceServer(script: "Fixtures/bluesky/server.py", arguments: ["--posts", "30", "--password", "abcd-efgh-ijkl-mnop"])
        let scratch = try Scratch()
        let wrong = try InteractiveProcess(["login", "bluesky", "me.test", "--service", server.baseURL], in: scratch.folder)
        wrong.type("wxyz-wxyz-wxyz-wxyz\n")
        #expect(try await wrong.status() == 77, "\(wrong.stderr)")
        #expect(files(scratch).isEmpty, "\(files(scratch))")

        let login = try InteractiveProcess(["login", "bluesky", "@me.test", "--service", server.baseURL], in: scratch.folder)
        login.type("abcd-efgh-ijkl-mnop\n")
        #expect(try await login.status() == 0, "\(login.stdout)\(login.stderr)")
        #expect(!login.stderr.contains("does not look like an app password"))
        let passwordFile = scratch.folder.appendingPathComponent("me.test.app-password")
        var info = stat()
        #expect(lstat(passwordFile.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let config = try String(contentsOf: scratch.folder.appendingPathComponent("feedsync.json"), encoding: .utf8)
        #expect(config.contains(#""identifier": "me.test""#) && !config.contains("abcd-efgh"), "\(config)")

        let pull = try await feedsync(["pull", "--config", scratch.folder.appendingPathComponent("feedsync.json").path])
        #expect(pull.status == 0, "\(pull.stderr)")
        let stats = try await server.control("GET", "/_control/stats")
        #expect(stats["logins"] as? Int == 2, "the wrong password's attempt and the login's; the pull reused the login's session")
    }

    @Test func aPasswordThatIsNotAnAppPasswordDrawsAWarning() async throws {
        let server = try ReferenceServer(script: "Fixtures/bluesky/server.py", arguments: ["--posts", "5", "--password", "hunter2"])
        let scratch = try Scratch()
        let login = try InteractiveProcess(["login", "bluesky", "me.test", "--service", server.baseURL, "--no-feed"], in: scratch.folder)
        login.type("hunter2\n")
        #expect(try await login.status() == 0, "\(login.stderr)")
        #expect(login.stderr.contains("does not look like an app password"))
        #expect(!login.stderr.contains("hunter2") && !login.stdout.contains("hunter2"))
    }
}
