import Core
import Foundation
import IntegrationKit

extension BlueskyLiveSource {
    /// Turns Jetstream events into changes of the feed, in their order: creates and updates are
    /// hydrated with `getPosts` (up to 25 URIs a call) and mapped as a polled page's items (one
    /// that cannot be mapped is skipped with its reason, as on a polled page), deletes are passed
    /// on once the hydrations before them are out.
    struct Hydrator {
        let source: BlueskyLiveSource
        let out: AsyncThrowingStream<LiveEvent, any Error>.Continuation
        private var pending: [(subject: String, repost: BlueskyRepost?, time: Int64)] = []
        /// The newest `time_us` handled and not yet yielded as a ``LiveEvent/position(_:)``.
        private var reached: Int64?

        init(source: BlueskyLiveSource, out: AsyncThrowingStream<LiveEvent, any Error>.Continuation) {
            self.source = source
            self.out = out
        }

        /// Handles a batch in order, then yields where the stream got to, for the store to commit
        /// with the batch's changes. A post's `delete` is passed on as it is: the store deletes
        /// the entries that repost it with it.
        mutating func handle(_ items: [Item], profiles: BlueskyLiveMembers) async throws {
            for item in items {
                guard case .event(let event) = item else {
                    try await flush()
                    out.yield(.connected)
                    continue
                }
                switch event.change {
                case .post(let uri):
                    pending.append((uri, nil, event.timeMicroseconds))
                case .repost(let uri, let subject, let at):
                    let by = profiles.profile(event.did) ?? BlueskyProfile(did: event.did, handle: "handle.invalid")
                    // The record's own time, unless it claims to be later than Jetstream saw it
                    // (the author writes createdAt): a time in the future would outrank every
                    // later profile of the reposter.
                    let seen = Self.date(event.timeMicroseconds)
                    let claimed = at.flatMap { RFC3339.date(from: $0) } ?? seen
                    pending.append((subject, BlueskyRepost(by: by, uri: uri, at: min(claimed, seen)), event.timeMicroseconds))
                case .postDeleted(let uri), .repostDeleted(let uri):
                    try await flush()
                    out.yield(.deleted(PostID(uri)))
                    handled(event.timeMicroseconds)
                case .identity(let handle):
                    // The handle shown for this author's reposts from now on, and on the stored author and posts.
                    if let handle, BlueskyIdentifier.isHandle(handle) {
                        try await flush()
                        profiles.setHandle(handle, of: event.did)
                        out.yield(.renamed(UserID(event.did), handle: handle, at: Self.date(event.timeMicroseconds)))
                    }
                    handled(event.timeMicroseconds)
                case .account(let active):
                    if source.accounts.changed(event.did, active: active) {
                        source.log.notice("Bluesky account \(event.did) is \(active ? "active again" : "deactivated or taken down") (a Jetstream account "
                                      + "event on \(source.subscription.shown)); its stored posts are kept")
                    }
                    handled(event.timeMicroseconds)
                case .other:
                    handled(event.timeMicroseconds)
                }
                if pending.count >= BlueskyLiveSource.hydrationBatch { try await flush() }
            }
            try await flush()
            if let time = reached {
                out.yield(.position(String(time)))
                reached = nil
            }
        }

        private mutating func handled(_ time: Int64) {
            source.position.handled(time)
            reached = max(reached ?? time, time)
        }

        private static func date(_ microseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(microseconds) / 1_000_000) }

        /// Hydrates what is pending and yields it, oldest first.
        private mutating func flush() async throws {
            while !pending.isEmpty {
                let batch = Array(pending.prefix(BlueskyLiveSource.hydrationBatch))
                pending.removeFirst(batch.count)
                var uris: [String] = []
                for item in batch where !uris.contains(item.subject) { uris.append(item.subject) }
                let response = try await source.session.query(source.client, "app.bsky.feed.getPosts",
                                                              uris.map { URLQueryItem(name: "uris", value: $0) },
                                                              "hydrating \(uris.count) live posts from")
                let page: BlueskyFeedResponse
                do { page = try BlueskyFeedResponse(body: response.body, barePosts: true) } catch {
                    throw ServiceError(.invalidResponse, "hydrating live posts from \(source.client.origin.host)", "the getPosts answer cannot be read")
                }
                var views: [String: BlueskyPostView] = [:]
                for case .item(let item) in page.entries { views[item.post.uri] = item.post }
                var authors: [BlueskyProfile: User] = [:]
                for item in batch {
                    // A post deleted (or hidden) before it was hydrated is not there: nothing to store.
                    guard let view = views[item.subject] else { continue }
                    // Mapped as a polled page's item; one that cannot be is skipped and counted as there.
                    do {
                        let post = try Post(view, repost: item.repost, authors: &authors)
                        out.yield(.upserted(post, videos: try view.embed?.video().map { [$0] } ?? []))
                    } catch {
                        let id = BlueskyFeedItem.postID(uri: view.uri, repostURI: item.repost?.uri, reposter: item.repost?.by.did)
                        out.yield(.skipped(SkippedItem(view, storedAs: id, error)))
                    }
                }
                if let newest = batch.map(\.time).max() { handled(newest) }
            }
        }
    }
}
