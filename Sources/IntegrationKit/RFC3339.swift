import Foundation

/// RFC 3339 timestamps (`2026-01-01T00:00:37Z`, `…37.250+02:00`), as the JSON APIs send them.
///
/// The parsing is ``InternetDate``'s, the one date parser: impossible calendar dates
/// (`2026-02-30`) and zone offsets beyond ±23:59 are refused.
public enum RFC3339 {
    public static func date(from text: String) -> Date? { InternetDate.rfc3339(text) }
}
