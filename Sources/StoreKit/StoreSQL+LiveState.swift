import Core
import Foundation

/// How each streaming feed is followed, for `feedsync status`: `live_state` (SQLite migration
/// 013, PostgreSQL migration 007). With several daemons on one store, the last to change a
/// feed's state is shown.
extension StoreSQL {
    private static let setLiveState = Shared("""
        INSERT INTO live_state (feed, state, at) VALUES ($1, $2, $3)
        ON CONFLICT (feed) DO UPDATE SET state = excluded.state, at = excluded.at
        """)
    private static let clearLiveState = Shared("DELETE FROM live_state WHERE feed = $1")
    private static let liveStates = Shared("SELECT feed, state FROM live_state ORDER BY feed")

    /// Records the feed's live state as of `date`, or clears it (`nil`).
    ///
    /// A refusal's reason may quote a server: the state passes the ``Redaction`` like every
    /// stored sentence.
    public func setLiveState(_ state: String?, ofFeed feed: String, at date: Date) -> StoreStatement {
        guard let state else { return statement(Self.clearLiveState, [.text(feed)]) }
        return statement(Self.setLiveState, [.text(feed), .text(Redaction.redact(state)), .integer(StoredTime.milliseconds(date))])
    }

    /// Every feed's live state.
    public func liveStates() -> StoreQuery<(feed: String, state: String)> {
        query(Self.liveStates, []) { ($0.text(0) ?? "", $0.text(1) ?? "") }
    }
}
