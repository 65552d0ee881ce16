import Foundation
import StoreKit

/// Times are stored as whole milliseconds since 1970 (``StoredTime``, shared with PostgreSQL).
func millisecondsSince1970(_ date: Date) -> Int64 { StoredTime.milliseconds(date) }

extension Date {
    init(milliseconds: Int64) { self = StoredTime.date(milliseconds) }
}
