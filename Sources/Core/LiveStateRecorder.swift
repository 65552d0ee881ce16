/// The part of the store that remembers how each streaming feed is followed, for `feedsync status`.
public protocol LiveStateRecorder: Sendable {
    /// Records a feed's live state in words (`"live since 2026-11-25T10:00:00Z"`,
    /// `"polling: the connection was refused"`), or clears it (`nil`) when the feed no longer streams.
    func setLiveState(_ state: String?, ofFeed feed: String) async throws

    /// Every feed's recorded live state, by feed name.
    func liveStates() async throws -> [String: String]
}
