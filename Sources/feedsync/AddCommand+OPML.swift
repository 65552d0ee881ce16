import App
import Core
import Foundation
import WebFeed

/// `feedsync add FILE.opml`: one web feed entry per subscription the file lists.
extension AddCommand {
    /// How many sites' pages are read at once while their feeds are found.
    static let discoveriesAtOnce = 8

    static func addOPML(_ path: String, _ editor: inout ConfigEditor, _ options: CommandLineOptions, _ output: CheckedOutput) async throws {
        try refuseTimeline(options, "an OPML file's feeds")
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
        // A feed the config has already, or one the file lists twice, is not added again.
        var known = Set(try webFeedURLs(editor))
        var feeds: [(name: String, fields: [(String, ConfigEditor.Value)])] = []
        var skipped = 0
        func add(_ subscription: OPML.Subscription, at url: URL) {
            let base = slug(subscription.title) ?? slug(subscription.url.host) ?? "feed"
            let name = uniqueName(options["--name"].map { "\($0).\(base)" } ?? base, taken: &taken)
            feeds.append((name, webFeedFields(url, options)))
        }
        // Feeds first: a site whose feed the file lists too is that feed, and takes no feed's name.
        for subscription in subscriptions where !subscription.isSite {
            guard known.insert(subscription.url.absoluteString).inserted else {
                skipped += 1
                continue
            }
            add(subscription, at: subscription.url)
        }
        // A site is added by the feed its page names, as `feedsync add URL` adds it, so it is
        // compared with the feeds there already; a site whose page names none is not added.
        let sites = subscriptions.filter { $0.isSite && !known.contains($0.url.absoluteString) }
        skipped += subscriptions.filter(\.isSite).count - sites.count
        var notFound: [String] = []
        var discovered = 0
        for (subscription, found) in zip(sites, await discoverFeeds(of: sites.map(\.url))) {
            switch found {
            case .success(let url):
                guard known.insert(url.absoluteString).inserted else {
                    skipped += 1
                    continue
                }
                add(subscription, at: url)
                discovered += 1
            case .failure(let error):
                let title = subscription.title.map { "\"\(Terminal.safe($0, limit: 80))\" " } ?? ""
                notFound.append("\(title)\(Terminal.safe(error.description, limit: 400))")
            }
        }
        for sentence in notFound { printError("feedsync: warning: not added: \(sentence)") }
        guard !feeds.isEmpty else {
            let why = subscriptions.isEmpty ? "it lists no feed (no <outline> with an xmlUrl or htmlUrl)"
                : notFound.isEmpty ? "\(editor.displayName) has every feed it lists already"
                : "\(editor.displayName) has every feed it lists already, or its site names none"
            throw ServiceError(.refused, "reading \(shown)", why)
        }
        try editor.addFeeds(feeds, usage: usage)
        var notes: [String] = []
        if skipped > 0 { notes.append("\(skipped) already there or listed twice") }
        if discovered > 0 { notes.append("\(discovered) found on \(discovered == 1 ? "its site's page" : "their sites' pages")") }
        if !notFound.isEmpty { notes.append("\(notFound.count) not added: \(notFound.count == 1 ? "its site names" : "their sites name") no feed it could read") }
        let note = notes.isEmpty ? "" : " (" + notes.joined(separator: "; ") + ")"
        try await ConfigChange.commit(editor, options, output, saying: "added \(feeds.count) web feed\(feeds.count == 1 ? "" : "s") from \(shown) to \(editor.displayName)\(note)")
    }

    /// The feed each site's page names, in the order given, found ``discoveriesAtOnce`` at a time.
    static func discoverFeeds(of sites: [URL]) async -> [Result<URL, ServiceError>] {
        await withTaskGroup(of: (Int, Result<URL, ServiceError>).self) { group in
            var results = [Result<URL, ServiceError>?](repeating: nil, count: sites.count)
            var next = 0
            func start() {
                guard next < sites.count else { return }
                let index = next, site = sites[index]
                next += 1
                group.addTask {
                    do {
                        return (index, .success(try await discoverFeed(at: site).feed.url))
                    } catch let error as ServiceError {
                        return (index, .failure(error))
                    } catch {
                        return (index, .failure(ServiceError(.unavailable, "finding a feed at \(Terminal.safe(site.absoluteString, limit: 200))", "\(error)")))
                    }
                }
            }
            for _ in 0..<discoveriesAtOnce { start() }
            for await (index, result) in group {
                results[index] = result
                start()
            }
            return results.map { $0 ?? .failure(ServiceError(.unavailable, "finding a feed", "it was not looked for")) }
        }
    }

    /// The `posts.url` of every web feed entry the config has.
    static func webFeedURLs(_ editor: ConfigEditor) throws -> [String] {
        try postsSections(editor).compactMap { posts in
            guard case .string("webfeed")? = posts["integration"], case .string(let url)? = posts["url"] else { return nil }
            return url
        }
    }
}
