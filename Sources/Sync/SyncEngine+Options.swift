import Core
import Foundation

extension SyncEngine {
    /// Tunables with defaults that suit a real backend.
    public struct Options: Sendable {
        /// Refresh the session when it has less than this many seconds left.
        public var refreshMargin: TimeInterval = 60
        /// The longest a rate limit is waited out before the sync gives up: long enough for
        /// Mastodon's 5-minute window.
        public var maxRateLimitWait: TimeInterval = 900
        /// How many rate limits in a row are waited out before the sync gives up.
        public var maxRateLimitRetries = 5
        /// How many times a call that fails transiently is tried before the sync gives up.
        public var maxAttempts = 6
        /// How long a retry of a call that failed transiently waits: the first up to 0.25 s, each
        /// further one up to twice as long, none more than 8 s, anywhere from 0 up (full jitter).
        public var retryBackoff = Backoff(first: 0.25, cap: 8, jitter: .full)
        /// How many earlier unresolved videos each sync retries.
        public var unresolvedVideoRetryLimit = 200
        /// The largest fraction of a feed's cached posts a full sync may delete as gone.
        public var maxDeletionRatio = 0.5
        /// Delete whatever a full sync did not see, however much that is.
        public var forceDelete = false
        /// How long to wait for another process's lease on the feed.
        public var lockWait: TimeInterval = 30
        /// Who this sync is, for the lease message another process sees.
        public var lockHolder = "feedsync"
        /// Where the sync logs: each retry and rate-limit wait at `debug`, with its attempt and
        /// wait; what an operator should see while it happens (a wait for a rate limit, a
        /// backend that changed) as a notice.
        public var log: Logger = .disabled
        /// The feed's rules, its own then the config's: the posts they block are not stored
        /// (``PostRules/filter(_:)``), on polled pages and streamed batches alike.
        public var rules = PostRules()
        /// How long the feed's posts are kept; `nil`: for ever. Applied after each sync under
        /// its lease, when the services have a ``Core/PostPruner``.
        public var retention: Retention?
        /// Told of each committed page, polled or streamed (webhooks); `nil`: no one is.
        public var announcer: (any PageAnnouncer)?

        public init() {}
    }
}
