import Core
import Foundation

/// The page walk: pages fetched and prepared one ahead by a child task, committed in order.
extension SyncEngine {
    /// A fetched page, prepared for the store, and the session that fetched it.
    struct Fetched<Prepared: Sendable>: Sendable {
        let page: FeedPage
        let prepared: Prepared
        let session: Session?
    }

    /// How many decoded pages a sync holds at most, the one committing included: the one
    /// committing and the next two, fetched and decoded meanwhile. Enough to keep the network
    /// and the store busy at once, few enough to keep memory flat.
    ///
    /// Two would do if every page took as long to fetch as to commit. They vary, so with one
    /// page ahead each side kept waiting for the other: timed inside a 20,000-status Mastodon
    /// sync, the committer waited 0.18–0.28 s in all for pages; with two ahead, 0.05–0.08 s (issue 40).
    static let decodedPagesHeld = 3

    /// Walks the feed from `cursor`, committing each page to `store` under `lease` (``PageWriter``),
    /// until a page says it is the last.
    ///
    /// The next page is fetched and prepared meanwhile by a child task, from the cursor of the
    /// one before it, so the feed is still read in order, one request at a time, and the page's
    /// rows are encoded off the store's queue. A page is applied only after the one before it
    /// has committed. The fetcher is a child of this call: it ends with it, before the feed's
    /// lease is given back.
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
        // The requests this walk has made: one met again means the backend goes in circles.
        var requested: Set<String> = cursor.map { [$0.position] } ?? []
        return try await withThrowingTaskGroup(of: Void.self) { group in
            let pipeline = PagePipeline<Fetched<Store.PreparedPage>>(capacity: Self.decodedPagesHeld)
            group.addTask { await fetchPages(for: store, from: cursor, session: session, into: pipeline) }
            defer { group.cancelAll() }
            let writer = PageWriter(store: store, lease: lease, host: services.videos, announcer: options.announcer)
            while true {
                try Task.checkCancellation()
                let fetched = try await pipeline.take()
                let page = fetched.page
                try await writer.commit(page, prepared: fetched.prepared, report: &report)
                await pipeline.committed()
                walk?.note(page)
                progress(Progress(pages: report.pages, posts: report.newPosts + report.updatedPosts + report.unchangedPosts,
                                  skipped: page.skipped))
                guard page.hasMore else { return sweepAtEnd(page) }
                guard requested.insert(page.nextRequest).inserted else {
                    throw ServiceError(.contractViolation, "reading feed \(feed)",
                                       "the backend sent a cursor it had already sent in this sync (\(Terminal.safe(page.nextRequest, limit: 120))), "
                                       + "so its pages go in circles; the \(report.pages) pages read are kept")
                }
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
        do {
            while true {
                try await pipeline.reserve()
                let fetched = try await fetchPage(for: store, after: cursor, session: session)
                await pipeline.put(fetched)
                guard fetched.page.hasMore else { return }
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
