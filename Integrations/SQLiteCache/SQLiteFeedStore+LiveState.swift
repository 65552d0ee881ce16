import Core
import Foundation

/// How each streaming feed is followed, for `feedsync status`: a table of its own, made on
/// first use, because the state is the running daemon's and nothing else reads or migrates it.
extension SQLiteFeedStore {
    private static let liveStateTable = "CREATE TABLE IF NOT EXISTS live_state (feed TEXT PRIMARY KEY, state TEXT NOT NULL, at INTEGER NOT NULL)"

    public func setLiveState(_ state: String?, ofFeed feed: String) throws {
        let db = try db("recording the live state of feed \(feed)")
        try storage("recording the live state of feed \(feed)") {
            try db.statement(Self.liveStateTable).run()
            if let state {
                // A refusal's reason may quote a server: it passes the redaction like every stored sentence.
                try db.statement("INSERT INTO live_state (feed, state, at) VALUES (?1, ?2, ?3) ON CONFLICT (feed) DO UPDATE SET state = ?2, at = ?3")
                    .run([.text(feed), .text(Redaction.redact(state)), .integer(millisecondsSince1970(Date()))])
            } else {
                try db.statement("DELETE FROM live_state WHERE feed = ?1").run([.text(feed)])
            }
        }
    }

    public func liveStates() throws -> [String: String] {
        let db = try db("reading the live states")
        return try storage("reading the live states") {
            let exists = try db.statement("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'live_state'").query { $0.int64(0) }
            guard exists.first == 1 else { return [:] }
            let rows = try db.statement("SELECT feed, state FROM live_state").query { ($0.string(0) ?? "", $0.string(1) ?? "") }
            return Dictionary(rows, uniquingKeysWith: { first, _ in first })
        }
    }
}
