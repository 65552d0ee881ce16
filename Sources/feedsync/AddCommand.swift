import App
import Core
import Foundation
import WebFeed

/// `feedsync add WHAT`: a feed from what a person would paste — a site or feed URL, an OPML
/// file, a Mastodon account (`@user@server`) or a Bluesky handle or DID.
enum AddCommand: Command {
    static let words = ["add"]
    static let summary = "Add a feed: a site or feed URL, an OPML file, @user@server, or a Bluesky handle."
    static let synopsis = "add WHAT [--name NAME] [--interval I] [--timeline T] [--config PATH]"
    static let options: [CommandLineOptions.Spec] = [
        .config,
        .init("--name", value: "NAME", "the feed's name (default: from its title or handle; for an OPML file, a prefix NAME.)"),
        .init("--interval", value: "I", "how often to pull it, as the config writes durations (30m, 1h; default 5m)"),
        .init("--timeline", value: "T", "Mastodon or Bluesky: the timeline instead of the account's posts (home, …)"),
    ]

    /// The largest OPML file read.
    static let maxOPMLBytes = 16 << 20

    /// What WHAT turned out to be.
    enum Kind: Equatable {
        case url(URL)
        case opml(String)
        case mastodon(user: String, server: String)
        case bluesky(String)
    }

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.count == 1, let what = options.positionals.first?.trimmingCharacters(in: .whitespaces), !what.isEmpty else {
            throw UsageError("give one thing to add: a site or feed URL, an OPML file, @user@server, or a Bluesky handle", usage: usage)
        }
        if let name = options["--name"], let problem = FeedName.problem(name) {
            throw UsageError("--name \(problem)", usage: usage)
        }
        var editor = try ConfigEditor(configPath: options["--config"])
        switch try kind(of: what) {
        case .url(let url): try await addWebFeed(url, &editor, options, output)
        case .opml(let path): try await addOPML(path, &editor, options, output)
        case .mastodon(let user, let server): try await addMastodon(user: user, server: server, &editor, options, output)
        case .bluesky(let actor): try await addBluesky(actor, &editor, options, output)
        }
        return .ok
    }

    /// Tells what was pasted: `@a@b` is Mastodon; `did:…`, `@handle` or `*.bsky.social` is
    /// Bluesky; a URL is a web feed; an existing file is OPML; anything else is a web address
    /// without its `https://`.
    static func kind(of what: String) throws -> Kind {
        let shown = Terminal.safe(what, limit: 200)
        if what.hasPrefix("@"), what.dropFirst().contains("@") {
            let parts = what.dropFirst().split(separator: "@", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
                  parts[0].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == "-") }),
                  parts[1].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == ":") }) else {
                throw UsageError("\"\(shown)\" is not a Mastodon account; write @user@server", usage: usage)
            }
            return .mastodon(user: parts[0], server: parts[1].lowercased())
        }
        if what.hasPrefix("did:") {
            // did:METHOD:ID, as the AT Protocol writes them (https://atproto.com/specs/did).
            guard what.utf8.count <= 2048, what.range(of: #"^did:[a-z]+:[A-Za-z0-9._:%-]*[A-Za-z0-9._%-]$"#, options: .regularExpression) != nil else {
                throw UsageError("\"\(shown)\" is not a DID; write did:plc:… or did:web:…", usage: usage)
            }
            return .bluesky(what)
        }
        if what.hasPrefix("@") || (!what.contains("/") && what.lowercased().hasSuffix(".bsky.social")) {
            let handle = (what.hasPrefix("@") ? String(what.dropFirst()) : what).lowercased()
            guard !handle.isEmpty, handle.contains("."),
                  handle.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }) else {
                throw UsageError("\"\(shown)\" is not a Bluesky handle; write @alice.bsky.social or did:plc:…", usage: usage)
            }
            return .bluesky("@" + handle)
        }
        if !what.contains("://") {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: (what as NSString).expandingTildeInPath, isDirectory: &isFolder), !isFolder.boolValue {
                return .opml((what as NSString).expandingTildeInPath)
            }
            if what.lowercased().hasSuffix(".opml") || ["/", "./", "../", "~"].contains(where: { what.hasPrefix($0) }) {
                throw ServiceError(.notFound, "reading \(shown)", isFolder.boolValue ? "it is a folder, not an OPML file" : "no such file")
            }
        }
        let withScheme = what.contains("://") ? what : "https://\(what)"
        guard let url = URL(string: withScheme), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty, url.user == nil, url.password == nil else {
            throw UsageError("\"\(shown)\" is not a web address, an OPML file, @user@server or a Bluesky handle", usage: usage)
        }
        return .url(url)
    }

    // MARK: Web feeds

    static func addWebFeed(_ url: URL, _ editor: inout ConfigEditor, _ options: CommandLineOptions, _ output: CheckedOutput) async throws {
        try refuseTimeline(options, "a web feed")
        let (found, others) = try await discoverFeed(at: url)
        var taken = try editor.feedNames()
        let name = options["--name"] ?? uniqueName(slug(found.title) ?? slug(found.url.host) ?? "feed", taken: &taken)
        try editor.addFeeds([(name, webFeedFields(found.url, options))], usage: usage)
        let title = found.title.map { "\"\(Terminal.safe($0, limit: 80))\", " } ?? ""
        try await ConfigChange.commit(editor, options, output, saying: "added feed \(name) (web feed \(title)\(Terminal.safe(found.url.absoluteString, limit: 200))) to \(editor.displayName)")
        if !others.isEmpty {
            try output.line("the page names \(others.count) more feed\(others.count == 1 ? "" : "s"): "
                  + others.map { Terminal.safe($0.absoluteString, limit: 200) }.joined(separator: ", "))
        }
    }

    /// The feed `url` is, or the first feed the page at `url` names (checked to be a feed), with
    /// its title and the other feeds the page names.
    ///
    /// - Throws: ``ServiceError`` in one sentence: the page names no feed, its link leads to
    ///   another page, or the address cannot be read.
    static func discoverFeed(at url: URL) async throws -> (feed: (url: URL, title: String?), others: [URL]) {
        let userAgent = "feedsync/\(feedsyncVersion)"
        switch try await WebFeedProbe.look(at: url, userAgent: userAgent) {
        case .feed(let feedURL, let title):
            return ((feedURL, title), [])
        case .page(_, let links):
            guard let first = links.first else {
                throw ServiceError(.invalidResponse, "finding a feed at \(Terminal.safe(url.absoluteString, limit: 200))",
                                   "the page names no feed (no <link rel=\"alternate\"> of an RSS, Atom or JSON Feed type); add the feed's own address")
            }
            guard case .feed(let feedURL, let title) = try await WebFeedProbe.look(at: first, userAgent: userAgent) else {
                throw ServiceError(.invalidResponse, "reading the feed \(Terminal.safe(first.absoluteString, limit: 200)) that \(Terminal.safe(url.absoluteString, limit: 200)) names",
                                   "it is a page, not a feed")
            }
            return ((feedURL, title), Array(links.dropFirst()))
        }
    }

    static func webFeedFields(_ url: URL, _ options: CommandLineOptions) -> [(String, ConfigEditor.Value)] {
        interval(options) + [("posts", .object([("integration", .string("webfeed")), ("url", .string(url.absoluteString))]))]
    }

    // MARK: Accounts

    static func addMastodon(user: String, server: String, _ editor: inout ConfigEditor, _ options: CommandLineOptions, _ output: CheckedOutput) async throws {
        let account = "@\(user)@\(server)"
        let login = try postsSections(editor).first { posts in
            guard case .string(let integration)? = posts["integration"], integration.lowercased() == "mastodon",
                  case .string(let text)? = posts["server"], let url = URL(string: text.contains("://") ? text : "https://\(text)") else { return false }
            return hostAndPort(url) == server
        }
        guard let login, case .string(let serverText)? = login["server"] else {
            throw UsageError("\(editor.displayName) has no Mastodon login on \(server) to read \(account) with; run `feedsync login mastodon \(server)` first", usage: usage)
        }
        var posts: [(String, ConfigEditor.Value)] = [("integration", .string("mastodon")), ("server", .string(serverText))]
        posts += secretKeys("accessToken", of: login)
        posts.append(("timeline", .string(options["--timeline"] ?? "account:@\(user)")))
        let name = options["--name"] ?? ConfigChange.feedName(from: "\(user)-\(server)")
        try editor.addFeed(name: name, fields: interval(options) + [("posts", .object(posts))], usage: usage)
        try await ConfigChange.commit(editor, options, output, saying: "added feed \(name) (\(account)'s posts, read with the login on \(server)) to \(editor.displayName)")
    }

    static func addBluesky(_ actor: String, _ editor: inout ConfigEditor, _ options: CommandLineOptions, _ output: CheckedOutput) async throws {
        let login = try postsSections(editor).first { posts in
            guard case .string(let integration)? = posts["integration"] else { return false }
            return integration.lowercased() == "bluesky"
        }
        guard let login, case .string(let identifier)? = login["identifier"] else {
            throw UsageError("\(editor.displayName) has no Bluesky login to read \(actor) with; run `feedsync login bluesky YOUR-HANDLE` first", usage: usage)
        }
        var posts: [(String, ConfigEditor.Value)] = [("integration", .string("bluesky"))]
        if case .string(let service)? = login["service"] { posts.append(("service", .string(service))) }
        posts.append(("identifier", .string(identifier)))
        posts += secretKeys("appPassword", of: login)
        posts.append(("timeline", .string(options["--timeline"] ?? "author:\(actor)")))
        let name = options["--name"] ?? ConfigChange.feedName(from: actor.lowercased())
        try editor.addFeed(name: name, fields: interval(options) + [("posts", .object(posts))], usage: usage)
        try await ConfigChange.commit(editor, options, output, saying: "added feed \(name) (\(actor)'s posts, read as \(Terminal.safe(identifier, limit: 80))) to \(editor.displayName)")
    }

    /// Where a login keeps its secret, as its entry names it: the file, the variable, or the value.
    static func secretKeys(_ name: String, of posts: [String: ConfigValue]) -> [(String, ConfigEditor.Value)] {
        for key in [name + "File", name + "Env", name] {
            if case .string(let value)? = posts[key] { return [(key, .string(value))] }
        }
        return []
    }

    // MARK: Shared

    /// The `posts` sections of the config's feed entries, as written.
    static func postsSections(_ editor: ConfigEditor) throws -> [[String: ConfigValue]] {
        guard case .object(let root) = try ConfigJSON.parse(Data(editor.text.utf8)), case .array(let feeds)? = root["feeds"] else { return [] }
        return feeds.compactMap { feed in
            guard case .object(let entry) = feed, case .object(let posts)? = entry["posts"], entry["opml"] == nil else { return nil }
            return posts
        }
    }

    static func interval(_ options: CommandLineOptions) -> [(String, ConfigEditor.Value)] {
        options["--interval"].map { [("interval", .string($0))] } ?? []
    }

    static func refuseTimeline(_ options: CommandLineOptions, _ what: String) throws {
        if options["--timeline"] != nil {
            throw UsageError("--timeline applies to Mastodon and Bluesky accounts, not to \(what)", usage: usage)
        }
    }

    /// `host` or `host:port` as a person writes a server, lower case.
    static func hostAndPort(_ url: URL) -> String {
        let host = (url.host ?? "").lowercased()
        guard let port = url.port, !(url.scheme == "https" && port == 443), !(url.scheme == "http" && port == 80) else { return host }
        return "\(host):\(port)"
    }

    /// `"Daring Fireball!"` → `daring-fireball`, as the config names an OPML entry's feeds; `nil` when nothing is left.
    static func slug(_ text: String?) -> String? { Config.slug(text) }

    /// `base`, or `base-2`, `base-3`… when it is taken, as the config names an OPML entry's feeds.
    static func uniqueName(_ base: String, taken: inout Set<String>) -> String { Config.uniqueName(base, in: &taken) }
}
