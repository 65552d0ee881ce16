import Foundation

/// What a live source reports: its connection opening, or a change to the feed as it happens.
public enum LiveEvent: Hashable, Sendable {
    /// The connection is open and changes from now on will arrive. Whatever happened before it
    /// (while disconnected) is not sent: the consumer runs an ordinary incremental sync now,
    /// so nothing falls into the gap.
    case connected
    /// A post appeared, or was edited: its newest version replaces the stored one, with the
    /// videos it carries.
    case upserted(Post, videos: [Video])
    /// A post was deleted (and, in the store, every entry that reposts it).
    case deleted(PostID)
    /// An item of the stream could not be read or mapped, and was dropped with the reason: it
    /// is counted and reported as a polled page's skipped item is (``FeedPage/skipped``).
    case skipped(SkippedItem)
    /// An author's handle changed, at `at` (Bluesky's `identity` event): the stored author
    /// takes it, in the page of its batch (``FeedPage/renames``).
    case renamed(UserID, handle: String, at: Date)
    /// The source has handled its stream up to here, in a form of its own (Jetstream's
    /// `time_us`): the consumer commits it with the changes before it
    /// (``FeedPage/streamPosition``) and hands it back on a restart
    /// (``LiveSource/events(resumingFrom:)``).
    case position(String)
}

/// A backend that pushes a feed's changes as they happen, beside its ``PostService``.
///
/// Live is a capability of an integration, not of the daemon: the daemon opens the source's
/// connection, commits what it yields through the same path as a polled page (Sync's
/// `PageWriter`, under the feed's lease, the feed's cursor left as the last poll put it), and
/// after every ``LiveEvent/connected`` runs the feed's ordinary incremental sync, so a
/// reconnect never leaves a gap. The feed's interval keeps polling as a safety net.
///
///     for try await event in source.events() {
///         switch event { case .connected: catchUp(); case .upserted(let post, _): … }
///     }
///
/// - Note: A source on another protocol plugs in the same way (Bluesky's Jetstream over
///   WebSocket: it hydrates what arrives itself and yields ready posts, a repost as a post of
///   its own). A source that can replay from a position of its own (Jetstream's `cursor`)
///   yields ``LiveEvent/position(_:)``, which the writer commits with the batch.
public protocol LiveSource: Sendable {
    /// Which connection this is. Feeds whose sources have the same key share one connection
    /// (same server, account and stream). Compared in memory only, never shown: it may hold a
    /// digest of the account's credentials.
    var connectionKey: String { get }

    /// The connection in words, for logs: `"mastodon stream user at social.example"`. No secret.
    var description: String { get }

    /// Opens the connection and yields its events until it ends.
    ///
    /// The stream yields ``LiveEvent/connected`` first, once the server has accepted it.
    /// It finishes when the server closes the connection, and throws when it fails; either
    /// way the consumer reconnects (with backoff) by calling `events()` again.
    ///
    /// - Throws (through the stream): ``ServiceError`` — `.unauthorized` when the credentials
    ///   are refused, `.unavailable` when the connection fails or goes idle, `.contractViolation`
    ///   or `.invalidResponse` for a hostile or broken stream (an oversized event, an event that
    ///   is not what it claims), `.refused` when the source will not connect at all (the stream
    ///   is on another origin than the credentials may go to): the consumer keeps polling.
    func events() -> AsyncThrowingStream<LiveEvent, any Error>

    /// ``events()``, resuming from a position committed earlier (``LiveEvent/position(_:)``).
    ///
    /// - Parameter stored: the positions stored for the connection's feeds, one per feed that
    ///   has one; the source resumes from the earliest it can read, or as ``events()`` when none.
    ///   The default ignores them.
    func events(resumingFrom stored: [String]) -> AsyncThrowingStream<LiveEvent, any Error>
}

extension LiveSource {
    public func events(resumingFrom stored: [String]) -> AsyncThrowingStream<LiveEvent, any Error> { events() }
}
