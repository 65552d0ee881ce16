import Core
import Foundation

/// The webhook deliveries queued in the store (``Core/WebhookQueue``).
extension StoreSQL {
    private static let enqueue = Shared("""
        INSERT INTO webhook_deliveries (id, endpoint, body, attempts, next_at, created_at) VALUES ($1, $2, $3, 0, $4, $4)
        ON CONFLICT (id) DO NOTHING
        """)
    private static let due = Shared("""
        SELECT id, endpoint, body, attempts FROM webhook_deliveries WHERE next_at <= $1 ORDER BY next_at, created_at, id LIMIT $2
        """)
    private static let remove = Shared("DELETE FROM webhook_deliveries WHERE id = $1")
    private static let retry = Shared("UPDATE webhook_deliveries SET attempts = $2, next_at = $3 WHERE id = $1")

    public func enqueue(_ delivery: WebhookDelivery, at now: Date) -> StoreStatement {
        statement(Self.enqueue, [.text(delivery.id), .text(delivery.endpoint), .text(delivery.body), .integer(StoredTime.milliseconds(now))])
    }

    public func dueDeliveries(at now: Date, limit: Int) -> StoreQuery<WebhookDelivery> {
        query(Self.due, [.integer(StoredTime.milliseconds(now)), .integer(limit)]) { row in
            WebhookDelivery(id: row.text(0) ?? "", endpoint: row.text(1) ?? "", body: row.text(2) ?? "", attempts: Int(row.integer(3) ?? 0))
        }
    }

    public func removeDelivery(_ id: String) -> StoreStatement { statement(Self.remove, [.text(id)]) }

    public func retryDelivery(_ id: String, attempts: Int, at next: Date) -> StoreStatement {
        statement(Self.retry, [.text(id), .integer(attempts), .integer(StoredTime.milliseconds(next))])
    }
}
