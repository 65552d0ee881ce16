import Core
import Foundation

/// `feedsync add FILE.opml`: one web feed entry per subscription the file lists, a site's
/// found on its page (within ``SiteDiscovery/Bounds``: `--deadline` and `--per-host`).
struct WebFeedOPMLForm: AddForm {
    let summary = "an OPML file"
    let label = "an OPML file"
    let noun = "an OPML file's feeds"
    let options = [
        AddOption(CommandOption("--deadline", value: "D", "how long finding its sites' feeds may take in all (90s, 5m; default 2m)"),
                  appliesTo: "an OPML file's sites"),
        AddOption(CommandOption("--per-host", value: "N", "the most requests to one host while its sites' feeds are found (default 20)"),
                  appliesTo: "an OPML file's sites"),
    ]
    let precedence = AddPrecedence.file

    /// The largest OPML file read.
    static let maxBytes = 16 << 20

    /// An existing file that is not a folder; a missing path that looks like a file is an error.
    func recognises(_ text: String, _ context: any AddContext) throws -> Bool {
        guard !text.contains("://") else { return false }
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: (text as NSString).expandingTildeInPath, isDirectory: &isFolder), !isFolder.boolValue {
            return true
        }
        if text.lowercased().hasSuffix(".opml") || ["/", "./", "../", "~"].contains(where: { text.hasPrefix($0) }) {
            throw ServiceError(.notFound, "reading \(Terminal.safe(text, limit: 200))", isFolder.boolValue ? "it is a folder, not an OPML file" : "no such file")
        }
        return false
    }

    func add(_ text: String, _ context: any AddContext) async throws -> AddedFeeds {
        let path = (text as NSString).expandingTildeInPath
        let bounds = try Self.bounds(context)
        let shown = Terminal.safe(path, limit: 200)
        let subscriptions = try Self.read(path, shown)
        var taken = try context.takenNames()
        // A feed the config has already, or one the file lists twice (however it is spelled:
        // NormalizedURL), is not added again, and a site listed twice is looked at once.
        var known = Set(try context.feeds().compactMap { Self.webFeedURL($0.posts) }.map(Self.sameURLKey))
        var feeds: [NewFeed] = []
        var skipped = 0
        func add(_ subscription: OPML.Subscription, at url: URL) {
            let base = FeedNaming.slug(subscription.title) ?? FeedNaming.slug(subscription.url.host) ?? "feed"
            let name = FeedNaming.unique(context.option("--name").map { "\($0).\(base)" } ?? base, in: &taken)
            feeds.append(NewFeed(name: name, posts: WebFeedIntegration.posts(url)))
        }
        // Feeds first: a site whose feed the file lists too is that feed, and takes no feed's name.
        for subscription in subscriptions where !subscription.isSite {
            guard known.insert(Self.sameURLKey(subscription.url.absoluteString)).inserted else {
                skipped += 1
                continue
            }
            add(subscription, at: subscription.url)
        }
        // A site is added by the feed its page names, as `feedsync add URL` adds it, so it is
        // compared with the feeds there already; a site whose page names none is not added.
        var sites: [OPML.Subscription] = []
        var siteKeys: Set<String> = []
        for subscription in subscriptions where subscription.isSite {
            let key = Self.sameURLKey(subscription.url.absoluteString)
            guard !known.contains(key), siteKeys.insert(key).inserted else {
                skipped += 1
                continue
            }
            sites.append(subscription)
        }
        let userAgent = context.userAgent
        let discovery = SiteDiscovery(bounds: bounds) { site, gate, budget in
            try await WebFeedProbe.firstFeed(at: site, userAgent: userAgent, gate: gate, budget: budget).feed.url
        }
        var notFound: [String] = []
        var passedBy: [(OPML.Subscription, SiteDiscovery.Skip)] = []
        var discovered = 0
        for (subscription, outcome) in zip(sites, await discovery.run(sites.map(\.url))) {
            switch outcome {
            case .found(let url):
                guard known.insert(Self.sameURLKey(url.absoluteString)).inserted else {
                    skipped += 1
                    continue
                }
                add(subscription, at: url)
                discovered += 1
            case .failed(let error):
                notFound.append("\(Self.quotedTitle(subscription))\(Terminal.safe(error.description, limit: 400))")
            case .skipped(let why):
                passedBy.append((subscription, why))
            }
        }
        for sentence in notFound { context.warn("not added: \(sentence)") }
        for (subscription, why) in passedBy {
            context.warn("skipped: \(Self.quotedTitle(subscription))\(Terminal.safe(subscription.url.absoluteString, limit: 200)): " + Self.describe(why, bounds))
        }
        let overBudget = passedBy.filter { if case .budget = $0.1 { true } else { false } }.count
        let late = passedBy.count - overBudget
        guard !feeds.isEmpty else {
            let why = subscriptions.isEmpty ? "it lists no feed (no <outline> with an xmlUrl or htmlUrl)"
                : !passedBy.isEmpty ? "no feed it lists could be added: \(passedBy.count) of its sites were skipped, their feeds not looked for "
                    + "(see the warnings; --per-host and --deadline allow more)"
                : notFound.isEmpty ? "\(context.configName) has every feed it lists already"
                : "\(context.configName) has every feed it lists already, or its site names none"
            throw ServiceError(.refused, "reading \(shown)", why)
        }
        var notes: [String] = []
        if skipped > 0 { notes.append("\(skipped) already there or listed twice") }
        if discovered > 0 { notes.append("\(discovered) found on \(discovered == 1 ? "its site's page" : "their sites' pages")") }
        if !notFound.isEmpty { notes.append("\(notFound.count) not added: \(notFound.count == 1 ? "its site names" : "their sites name") no feed it could read") }
        if overBudget > 0 { notes.append("\(overBudget) skipped: \(bounds.requestsPerHost) requests to one host were spent (--per-host)") }
        if late > 0 { notes.append("\(late) skipped: the deadline of \(Self.describe(bounds.deadline)) passed (--deadline)") }
        let note = notes.isEmpty ? "" : " (" + notes.joined(separator: "; ") + ")"
        return AddedFeeds(feeds: feeds, saying: "added \(feeds.count) web feed\(feeds.count == 1 ? "" : "s") from \(shown) to \(context.configName)\(note)")
    }

    /// The subscriptions of the OPML file at `path`, at most ``maxBytes`` of it read.
    static func read(_ path: String, _ shown: String) throws -> [OPML.Subscription] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ServiceError(.notFound, "reading \(shown)", "it cannot be opened")
        }
        let data = try handle.read(upToCount: maxBytes + 1) ?? Data()
        try? handle.close()
        guard data.count <= maxBytes else {
            throw ServiceError(.refused, "reading \(shown)", "it is larger than \(maxBytes >> 20) MiB, more than a list of subscriptions")
        }
        do {
            return try OPML.subscriptions(in: data)
        } catch let error as OPML.ReadError {
            throw ServiceError(.refused, "reading \(shown)", error.description)
        }
    }

    /// The `url` of a web feed's `posts` section as written; `nil` for another integration's.
    static func webFeedURL(_ posts: [String: ConfigValue]) -> String? {
        guard case .string(let integration)? = posts["integration"], integration.lowercased() == WebFeedIntegration.name,
              case .string(let url)? = posts["url"] else { return nil }
        return url
    }

    /// `"Title" `, or nothing for an outline without one.
    static func quotedTitle(_ subscription: OPML.Subscription) -> String {
        subscription.title.map { "\"\(Terminal.safe($0, limit: 80))\" " } ?? ""
    }

    /// The key two spellings of one URL share (``NormalizedURL``), or the text as it is.
    static func sameURLKey(_ text: String) -> String { NormalizedURL(string: text)?.description ?? text }
}
