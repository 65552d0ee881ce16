import Core
import Foundation

/// How each streaming feed is followed, for `feedsync status`: a table of its own, made on
/// first use, because the state belongs to the running daemons and nothing else reads it.
/// With several daemons on one database, each follows the streams and the last to change a
/// feed's state is shown.
extension PostgresFeedStore: LiveStateRecorder {
    public func setLiveState(_ state: String?, ofFeed feed: String) throws {
        _ = try run("recording the live state of feed \(feed)",
                    "CREATE TABLE IF NOT EXISTS live_state (feed TEXT PRIMARY KEY, state TEXT NOT NULL, at BIGINT NOT NULL)")
        if let state {
            // A refusal's reason may quote a server: it passes the redaction like every stored sentence.
            _ = try run("recording the live state of feed \(feed)", """
                INSERT INTO live_state (feed, state, at) VALUES ($1, $2, $3)
                ON CONFLICT (feed) DO UPDATE SET state = $2, at = $3
                """, [feed, Redaction.redact(state), "\(Int64(Date().timeIntervalSince1970 * 1000))"])
        } else {
            _ = try run("recording the live state of feed \(feed)", "DELETE FROM live_state WHERE feed = $1", [feed])
        }
    }

    public func liveStates() throws -> [String: String] {
        let exists = try run("reading the live states", "SELECT to_regclass('live_state') IS NOT NULL")
        guard exists.first?.first == "t" else { return [:] }
        let rows = try run("reading the live states", "SELECT feed, state FROM live_state")
        return Dictionary(rows.compactMap { row in row.count == 2 ? row[0].flatMap { feed in row[1].map { (feed, $0) } } : nil },
                          uniquingKeysWith: { first, _ in first })
    }
}
