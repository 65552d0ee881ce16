import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The fake Mastodon server (`Fixtures/mastodon/server.py`), its OAuth in `mode` (normal, deny, …).
func mastodonFixture(_ mode: String = "normal") async throws -> ReferenceServer {
    let server = try ReferenceServer(script: "Fixtures/mastodon/server.py", arguments: ["--statuses", "60", "--token", "fixed-token"])
    if mode != "normal" { try await server.control("POST", "/_control/oauth?mode=\(mode)") }
    return server
}

/// What the browser does: follow the authorization URL to the redirect it answers.
func consent(_ url: String) async throws -> String {
    try await run(URL(fileURLWithPath: "/usr/bin/env"), ["curl", "-s", "-o", "/dev/null", "-w", "%{redirect_url}", url]).stdout
}

/// A GET with curl, the answer's head and body in `stdout`.
func httpGet(_ url: String) async throws -> Finished {
    try await run(URL(fileURLWithPath: "/usr/bin/env"), ["curl", "-s", "-i", "--max-time", "10", url])
}

/// The code the fixture's out-of-band page shows for the authorization URL `authorize`.
func pastedCode(for authorize: String) async throws -> String? {
    let page = try await httpGet(authorize).stdout
    return page.range(of: #"value="([^"]+)""#, options: .regularExpression).map { String(page[$0].dropFirst(7).dropLast()) }
}

/// The fixture's OAuth bookkeeping: tokens still valid, tokens revoked, apps registered.
struct OAuthLedger: Equatable {
    var valid: Set<String>
    var revoked: [String]
    var apps: Int
}

extension ReferenceServer {
    func oauthLedger() async throws -> OAuthLedger {
        let oauth = try await control("GET", "/_control/oauth")
        return OAuthLedger(valid: Set(oauth["tokens"] as? [String] ?? []), revoked: oauth["revoked"] as? [String] ?? [],
                           apps: (oauth["apps"] as? [Any])?.count ?? -1)
    }
}

/// `feedsync login mastodon SERVER --paste …` run to its end: the code the fixture shows is typed
/// in, after `beforeTyping` (a test's change while the sign-in waits). A login refused before
/// the browser opens simply ends.
func pasteLogin(_ server: ReferenceServer, in folder: URL, _ extra: [String] = [],
                beforeTyping: () async throws -> Void = {}) async throws -> InteractiveProcess {
    let login = try InteractiveProcess(["login", "mastodon", server.baseURL, "--paste"] + extra, in: folder)
    if let authorize = try await login.line(startingWith: "http://127.0.0.1:\(server.port)/oauth/authorize"),
       let code = try await pastedCode(for: authorize) {
        try await beforeTyping()
        login.type(code + "\n")
    }
    _ = try await login.status()
    return login
}

/// Every entry under `folder`, hidden ones included, as what a byte-for-byte comparison needs:
/// a file's mode and bytes, a symlink's target, a folder's mark.
func snapshot(_ folder: URL) -> [String: String] {
    var all: [String: String] = [:]
    let manager = FileManager.default
    func walk(_ url: URL, _ prefix: String) {
        for name in ((try? manager.contentsOfDirectory(atPath: url.path)) ?? []).sorted() {
            let entry = url.appendingPathComponent(name)
            let key = prefix + name
            var info = stat()
            guard lstat(entry.path, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFLNK: all[key] = "-> " + ((try? manager.destinationOfSymbolicLink(atPath: entry.path)) ?? "?")
            case S_IFDIR:
                all[key] = "folder"
                walk(entry, key + "/")
            default:
                all[key] = String(info.st_mode & 0o7777, radix: 8) + " " + String(decoding: manager.contents(atPath: entry.path) ?? Data(), as: UTF8.self)
            }
        }
    }
    walk(folder, "")
    return all
}
