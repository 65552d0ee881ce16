import Core
import Foundation

/// `--deadline` and `--per-host`: the bounds of finding the feeds of an OPML file's sites.
extension WebFeedOPMLForm {
    /// The longest `--deadline`.
    static let maxDeadline: Duration = .seconds(24 * 3600)
    /// The most `--per-host`.
    static let maxRequestsPerHost = 100_000

    /// The bounds the options ask for, the defaults (``SiteDiscovery/Bounds``) for what they leave out.
    ///
    /// - Throws: a usage error for a deadline that is not a duration (`90s`, `5m`, `1h`) from
    ///   1 s to 24 h, or a budget that is not a whole number from 1 to 100,000.
    static func bounds(_ context: any AddContext) throws -> SiteDiscovery.Bounds {
        var bounds = SiteDiscovery.Bounds()
        if let text = context.option("--deadline") {
            guard let seconds = durationSeconds(text), seconds >= 1, seconds <= Double(maxDeadline.components.seconds) else {
                throw context.usageError("--deadline \"\(Terminal.safe(text, limit: 40))\" is not a duration from 1s to 24h; write 90s, 5m or 1h")
            }
            bounds.deadline = .milliseconds(Int64((seconds * 1000).rounded()))
        }
        if let text = context.option("--per-host") {
            guard let count = Int(text), (1...maxRequestsPerHost).contains(count) else {
                throw context.usageError("--per-host \"\(Terminal.safe(text, limit: 40))\" is not a whole number from 1 to \(maxRequestsPerHost)")
            }
            bounds.requestsPerHost = count
        }
        return bounds
    }

    /// `"90s"`, `"5m"`, `"1.5h"` in seconds, as the config writes durations.
    static func durationSeconds(_ text: String) -> Double? {
        guard let unit = text.last, let scale = ["s": 1.0, "m": 60.0, "h": 3600.0][String(unit)],
              let number = Double(text.dropLast()), number.isFinite else { return nil }
        return number * scale
    }

    /// What a skipped site's warning says after its URL.
    static func describe(_ skip: SiteDiscovery.Skip, _ bounds: SiteDiscovery.Bounds) -> String {
        switch skip {
        case .budget(let host): "the \(bounds.requestsPerHost) requests to \(Terminal.safe(host, limit: 200)) that finding feeds may send were spent (--per-host)"
        case .deadline: "the deadline of \(describe(bounds.deadline)) for finding feeds passed first (--deadline)"
        }
    }

    /// `2m`, `90s`, `1h`: a duration as the flags write it.
    static func describe(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        if seconds >= 3600, seconds.truncatingRemainder(dividingBy: 3600) == 0 { return "\(Int(seconds / 3600))h" }
        if seconds >= 60, seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60))m" }
        return seconds.rounded() == seconds ? "\(Int(seconds))s" : String(format: "%.1fs", seconds)
    }
}
