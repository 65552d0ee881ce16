import Core
import Foundation

/// The daemons' records, as `feedsync status` lists them.
extension StoreSQL {
    private static let daemons = Shared("SELECT instance, host, pid, started_at, beat_at FROM daemon ORDER BY started_at, instance")
    private static let leave = Shared("DELETE FROM daemon WHERE instance = $1")

    /// The daemons that have joined and not left, oldest first.
    public func daemons() -> StoreQuery<DaemonInstance> {
        query(Self.daemons, []) { row in
            DaemonInstance(id: row.text(0) ?? "", host: row.text(1) ?? "", process: row.integer(2).map { "\($0)" } ?? "",
                           startedAt: StoredTime.date(row.integer(3) ?? 0), beatAt: StoredTime.date(row.integer(4) ?? 0))
        }
    }

    /// Removes a daemon's record.
    public func leave(_ daemon: DaemonInstance) -> StoreStatement { statement(Self.leave, [.text(daemon.id)]) }
}
