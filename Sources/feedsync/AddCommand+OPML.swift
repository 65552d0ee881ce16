import App
import Core
import Foundation
import WebFeed

/// `feedsync add FILE.opml`: one web feed entry per subscription the file lists.
extension AddCommand {
    /// The bounds of finding the feeds of an OPML file's sites when no flag changes them.
    static let defaultDiscoveryBounds = SiteDiscovery.Bounds()

    static func addOPML(_ path: String, _ editor: inout ConfigEditor, _ options: CommandLineOptions, _ output: CheckedOutput) async throws {
        try refuseTimeline(options, "an OPML file's feeds")
        let bounds = try discoveryBounds(options)
        let shown = Terminal.safe(path, limit: 200)
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ServiceError(.notFound, "reading \(shown)", "it cannot be opened")
        }
        let data = try handle.read(upToCount: maxOPMLBytes + 1) ?? Data()
        try? handle.close()
        guard data.count <= maxOPMLBytes else {
            throw ServiceError(.refused, "reading \(shown)", "it is larger than \(maxOPMLBytes >> 20) MiB, more than a list of subscriptions")
        }
        let subscriptions: [OPML.Subscription]
        do {
            subscriptions = try OPML.subscriptions(in: data)
        } catch let error as OPML.ReadError {
            throw ServiceError(.refused, "reading \(shown)", error.description)
        }
        var taken = try editor.feedNames()
        // A feed the config has already, or one the file lists twice (however it is spelled:
        // NormalizedURL), is not added again, and a site listed twice is looked at once.
        var known = Set(try webFeedURLs(editor).map(sameURLKey))
        var feeds: [(name: String, fields: [(String, ConfigEditor.Value)])] = []
        var skipped = 0
        func add(_ subscription: OPML.Subscription, at url: URL) {
            let base = slug(subscription.title) ?? slug(subscription.url.host) ?? "feed"
            let name = uniqueName(options["--name"].map { "\($0).\(base)" } ?? base, taken: &taken)
            feeds.append((name, webFeedFields(url, options)))
        }
        // Feeds first: a site whose feed the file lists too is that feed, and takes no feed's name.
        for subscription in subscriptions where !subscription.isSite {
            guard known.insert(sameURLKey(subscription.url.absoluteString)).inserted else {
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
            let key = sameURLKey(subscription.url.absoluteString)
            guard !known.contains(key), siteKeys.insert(key).inserted else {
                skipped += 1
                continue
            }
            sites.append(subscription)
        }
        let discovery = SiteDiscovery(bounds: bounds) { site, gate, budget in
            try await discoverFeed(at: site, gate: gate, budget: budget).feed.url
        }
        var notFound: [String] = []
        var passedBy: [(OPML.Subscription, SiteDiscovery.Skip)] = []
        var discovered = 0
        for (subscription, outcome) in zip(sites, await discovery.run(sites.map(\.url))) {
            switch outcome {
            case .found(let url):
                guard known.insert(sameURLKey(url.absoluteString)).inserted else {
                    skipped += 1
                    continue
                }
                add(subscription, at: url)
                discovered += 1
            case .failed(let error):
                notFound.append("\(quotedTitle(subscription))\(Terminal.safe(error.description, limit: 400))")
            case .skipped(let why):
                passedBy.append((subscription, why))
            }
        }
        for sentence in notFound { printError("feedsync: warning: not added: \(sentence)") }
        for (subscription, why) in passedBy {
            printError("feedsync: warning: skipped: \(quotedTitle(subscription))\(Terminal.safe(subscription.url.absoluteString, limit: 200)): "
                       + describe(why, bounds))
        }
        let overBudget = passedBy.filter { if case .budget = $0.1 { true } else { false } }.count
        let late = passedBy.count - overBudget
        guard !feeds.isEmpty else {
            let why = subscriptions.isEmpty ? "it lists no feed (no <outline> with an xmlUrl or htmlUrl)"
                : !passedBy.isEmpty ? "no feed it lists could be added: \(passedBy.count) of its sites were skipped, their feeds not looked for "
                    + "(see the warnings; --per-host and --deadline allow more)"
                : notFound.isEmpty ? "\(editor.displayName) has every feed it lists already"
                : "\(editor.displayName) has every feed it lists already, or its site names none"
            throw ServiceError(.refused, "reading \(shown)", why)
        }
        try editor.addFeeds(feeds, usage: usage)
        var notes: [String] = []
        if skipped > 0 { notes.append("\(skipped) already there or listed twice") }
        if discovered > 0 { notes.append("\(discovered) found on \(discovered == 1 ? "its site's page" : "their sites' pages")") }
        if !notFound.isEmpty { notes.append("\(notFound.count) not added: \(notFound.count == 1 ? "its site names" : "their sites name") no feed it could read") }
        if overBudget > 0 { notes.append("\(overBudget) skipped: \(bounds.requestsPerHost) requests to one host were spent (--per-host)") }
        if late > 0 { notes.append("\(late) skipped: the deadline of \(describe(bounds.deadline)) passed (--deadline)") }
        let note = notes.isEmpty ? "" : " (" + notes.joined(separator: "; ") + ")"
        try await ConfigChange.commit(editor, options, output, saying: "added \(feeds.count) web feed\(feeds.count == 1 ? "" : "s") from \(shown) to \(editor.displayName)\(note)")
    }

    /// `"Title" `, or nothing for an outline without one.
    static func quotedTitle(_ subscription: OPML.Subscription) -> String {
        subscription.title.map { "\"\(Terminal.safe($0, limit: 80))\" " } ?? ""
    }

    /// What a skipped site's warning says after its URL.
    static func describe(_ skip: SiteDiscovery.Skip, _ bounds: SiteDiscovery.Bounds) -> String {
        switch skip {
        case .budget(let host): "the \(bounds.requestsPerHost) requests to \(Terminal.safe(host, limit: 200)) that finding feeds may send were spent (--per-host)"
        case .deadline: "the deadline of \(describe(bounds.deadline)) for finding feeds passed first (--deadline)"
        }
    }

    /// The key two spellings of one URL share (``NormalizedURL``), or the text as it is.
    static func sameURLKey(_ text: String) -> String { NormalizedURL(string: text)?.description ?? text }

    /// The `posts.url` of every web feed entry the config has.
    static func webFeedURLs(_ editor: ConfigEditor) throws -> [String] {
        try postsSections(editor).compactMap { posts in
            guard case .string("webfeed")? = posts["integration"], case .string(let url)? = posts["url"] else { return nil }
            return url
        }
    }
}
