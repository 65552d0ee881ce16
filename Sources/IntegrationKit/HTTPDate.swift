import Foundation

/// HTTP's dates (RFC 9110 §5.6.7) and the `Retry-After` field.
public enum HTTPDate {
    /// A `Retry-After` value, seconds or an HTTP date, as the time to retry at; `nil` when it
    /// cannot be read or lies more than a day ahead.
    public static func retryAfter(_ value: String, now: Date = Date()) -> Date? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed) {
            guard (0...86_400).contains(seconds) else { return nil }
            return now.addingTimeInterval(TimeInterval(seconds))
        }
        guard let date = date(from: trimmed), date.timeIntervalSince(now) <= 86_400 else { return nil }
        return date
    }

    /// Parses the preferred IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) and the two obsolete
    /// forms (RFC 850 and asctime) that recipients must still accept, with ``InternetDate``.
    public static func date(from text: String) -> Date? { InternetDate.rfc822(text) }
}
