import Foundation
import IntegrationKit

/// Reads the dates feeds write, with IntegrationKit's one date parser: RFC 822 (RSS, with named
/// zones, missing seconds, single-digit days, two-digit years) and RFC 3339 / ISO 8601 (Atom,
/// JSON Feed, `dc:date`). See ``InternetDate/feedDate(_:)``.
///
/// A date it cannot read is `nil`, never a guess: the item then keeps its first-seen time.
enum FeedDate {
    /// Either form, whichever the text is.
    static func date(from text: String?) -> Date? {
        guard let text = text.map(FeedText.trimmed), !text.isEmpty else { return nil }
        return InternetDate.feedDate(text)
    }
}
