import Core
import Foundation

/// The page walk: pages fetched and prepared one ahead by a child task, committed in order.
extension SyncEngine {
    /// A fetched page, prepared for the store, and the session that fetched it.
    struct Fetched<Prepared: Sendable>: Sendable {
        let page: FeedPage
        let prepared: Prepared
        let session: Session?
        /// Whether the page's next request is one this walk already made: the backend goes in
        /// circles, and nothing is fetched after this page.
        var circles = false

        /// What the page holds: its changes, and about their bytes (``FeedPage/approximateBytes``),
        /// counted once: the pipeline reads it when the page is put and again when it commits.
        let size: PageSize

        init(page: FeedPage, prepared: Prepared, session: Session?) {
            (self.page, self.prepared, self.session) = (page, prepared, session)
            size = PageSize(posts: page.changes.count, bytes: page.approximateBytes)
        }
    }

    /// How many decoded pages a sync always may hold, the one committing included: the one
    /// committing and the next two, fetched and decoded meanwhile. Enough to keep the network
    /// and the store busy at once.
    ///
    /// Two would do if every page took as long to fetch as to commit. They vary, so with one
    /// page ahead each side kept waiting for the other: timed inside a 20,000-status Mastodon
    /// sync, the committer waited 0.18–0.28 s in all for pages; with two ahead, 0.05–0.08 s (issue 40).
    static let decodedPagesHeld = 3

    /// How many decoded pages a sync holds at most, when they are small: past
    /// ``decodedPagesHeld``, pages are held only while those decoded and not yet committed
    /// hold fewer than 1,000 posts and about 8 MiB (``decodedPagesBudget``,
    /// ``FeedPage/approximateBytes``). Small pages waiting commit together, as many as the
    /// store takes in one transaction (``Core/PageCommitter/pagesPerTransaction``), so a store
    /// that falls behind catches up.
    /// Memory stays flat: at most this many pages, or the first three and about the budget.
    ///
    /// Over a 20,000-status Mastodon pull of 40-status pages into SQLite, this and 8 pages a
    /// transaction took the median of 8 alternating pulls from 1.64 s (three pages held, one a
    /// transaction) to 1.27 s (issue 40).
    static let decodedPagesHeldAtMost = 12

    /// See ``decodedPagesHeldAtMost``.
    static let decodedPagesBudget = PageSize(posts: 1_000, bytes: 8 << 20)

    /// Walks the feed from `cursor`, committing each page to `store` under `lease` (``PageWriter``),
    /// until a page says it is the last.
    ///
    /// The next page is fetched and prepared meanwhile by a child task, from the cursor of the
    /// one before it, so the feed is still read in order, one request at a time, and the page's
    /// rows are encoded off the store's queue. Pages commit in order, each after the one before
    /// it or in one transaction with it: those already fetched when the store is ready commit
    /// together, as many as it takes at once. The fetcher is a child of this call: it ends with
    /// it, before the feed's lease is given back.
    ///
    /// - Parameters:
    ///   - sweepAtEnd: given the last page, whether the walk ends in a sweep.
    ///   - walk: notes each committed page, for a walk from the start.
    /// - Returns: whether the walk ends in a sweep.
    /// - Throws: the first failure of a fetch or a commit; `.contractViolation` when the backend
    ///   sends a cursor twice, so its pages go in circles.
    func commitPages<Store: SyncStore>(to store: Store, from cursor: FeedCursor?, session: Session?, under lease: FeedLease,
                                       sweepAtEnd: (FeedPage) -> Bool, walk: inout FullWalk?, report: inout SyncReport,
                                       progress: @Sendable (Progress) -> Void) async throws -> Bool {
        return try await withThrowingTaskGroup(of: Void.self) { group in
            let pipeline = PagePipeline<Fetched<Store.PreparedPage>>(least: Self.decodedPagesHeld, most: Self.decodedPagesHeldAtMost,
                                                                     budget: Self.decodedPagesBudget)
            group.addTask { await fetchPages(for: store, from: cursor, session: session, into: pipeline) }
            defer { group.cancelAll() }
            let writer = PageWriter(store: store, lease: lease, host: services.videos, announcer: options.announcer)
            let perTransaction = max(1, store.pagesPerTransaction)
            while true {
                try Task.checkCancellation()
                // The next page, and those already waiting behind it that commit with it.
                var pages = [try await pipeline.take()]
                if pages[0].page.hasMore { pages += await pipeline.takeWaiting(upTo: perTransaction - 1) }
                // None after the last page, or after one whose next request was already made.
                var kept = 0
                var circling: FeedPage?
                for fetched in pages {
                    kept += 1
                    guard fetched.page.hasMore else { break }
                    guard !fetched.circles else { circling = fetched.page; break }
                }
                pages.removeSubrange(kept...)
                try await writer.commit(pages.map { ($0.page, $0.prepared) }, report: &report) { page, report in
                    walk?.note(page)
                    progress(Progress(pages: report.pages, posts: report.newPosts + report.updatedPosts + report.unchangedPosts,
                                      skipped: page.skipped))
                }
                await pipeline.committed(pages.map { $0.size })   // not a key path: see PageWriter.commit
                if let circling {
                    throw ServiceError(.contractViolation, "reading feed \(feed)",
                                       "the backend sent a cursor it had already sent in this sync (\(Terminal.safe(circling.nextRequest, limit: 120))), "
                                       + "so its pages go in circles; the \(report.pages) pages read are kept")
                }
                if let last = pages.last?.page, !last.hasMore { return sweepAtEnd(last) }
            }
        }
    }

    /// The fetcher: fetches and prepares pages from `cursor` on, in order, handing each to
    /// `pipeline`, until a page says it is the last, the pipeline is cancelled, or a fetch
    /// fails (the failure goes down the pipeline to the committing side).
    private func fetchPages<Store: SyncStore>(for store: Store, from cursor: FeedCursor?, session: Session?,
                                              into pipeline: PagePipeline<Fetched<Store.PreparedPage>>) async {
        var cursor = cursor
        var session = session
        // The requests this walk has made: one met again means the backend goes in circles. The
        // fetching ends at that page (the committing side reports it when it reaches it), not
        // after as many pages as the pipeline holds.
        var requested: Set<String> = cursor.map { [$0.position] } ?? []
        do {
            while true {
                try await pipeline.reserve()
                var fetched = try await fetchPage(for: store, after: cursor, session: session)
                fetched.circles = fetched.page.hasMore && !requested.insert(fetched.page.nextRequest).inserted
                await pipeline.put(fetched, size: fetched.size)
                guard fetched.page.hasMore, !fetched.circles else { return }
                (cursor, session) = (fetched.page.nextCursor, fetched.session)
            }
        } catch {
            await pipeline.fail(error)
        }
    }

    /// Fetches a page and prepares it for the store, returning the session that worked. A
    /// rejected token is answered by one refresh, then one new login, then the error: no retry
    /// storm against a server that refuses the credentials.
    private func fetchPage<Store: SyncStore>(for store: Store, after cursor: FeedCursor?,
                                             session: Session?) async throws -> Fetched<Store.PreparedPage> {
        var session = session
        var renewals = 0
        while true {
            do {
                let current = session
                let page = admitted(try await withRetries { try await services.posts.page(after: cursor, session: current) })
                return Fetched(page: page, prepared: store.prepare(page), session: session)
            } catch let error as ServiceError where error.code == .unauthorized && renewals < 2 {
                // Without a login there is nothing to renew: the backend's refusal stands.
                guard let current = session, services.authentication != nil else { throw error }
                renewals += 1
                session = try await renew(current, logInAgain: renewals == 2)
            }
        }
    }
}

extension FeedPage {
    /// About the bytes the decoded page holds: every string of its posts and videos a backend can
    /// make long (text, HTML, names, URLs, alternative text, labels), and 256 for each change's,
    /// attachment's and video's other fields. It bounds a sync's memory (``PagePipeline``), so it
    /// errs on the large side.
    var approximateBytes: Int {
        func length(_ link: WebLink?) -> Int { link?.absoluteString.utf8.count ?? 0 }
        func length(_ user: User) -> Int {
            user.id.rawValue.utf8.count + user.handle.utf8.count + user.displayName.utf8.count + length(user.avatar)
        }
        var bytes = 256 * (changes.count + videos.count) + skipped.reduce(0) { $0 + $1.reason.utf8.count + ($1.id?.utf8.count ?? 0) }
        for change in changes {
            guard case .upsert(let post) = change else { continue }
            bytes += post.id.rawValue.utf8.count + post.text.utf8.count + (post.html?.utf8.count ?? 0)
                + (post.title?.utf8.count ?? 0) + (post.contentWarning?.utf8.count ?? 0) + length(post.link) + length(post.author)
                + (post.repost.map { length($0.by) + $0.originalID.rawValue.utf8.count } ?? 0)
                + post.videoIDs.reduce(0) { $0 + $1.rawValue.utf8.count } + post.labels.reduce(0) { $0 + $1.utf8.count }
            for attachment in post.attachments {
                bytes += 256 + attachment.kind.utf8.count + length(attachment.link) + length(attachment.previewLink)
                    + (attachment.description?.utf8.count ?? 0) + (attachment.title?.utf8.count ?? 0) + (attachment.mimeType?.utf8.count ?? 0)
            }
        }
        for video in videos {
            bytes += video.id.rawValue.utf8.count + video.title.utf8.count + length(video.stream) + length(video.thumbnail)
        }
        return bytes
    }
}
