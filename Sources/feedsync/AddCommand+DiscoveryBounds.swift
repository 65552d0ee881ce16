import App
import Core
import Foundation
import WebFeed

/// `--deadline` and `--per-host`: the bounds of finding the feeds of an OPML file's sites.
extension AddCommand {
    /// The longest `--deadline`.
    static let maxDiscoveryDeadline: Duration = .seconds(24 * 3600)
    /// The most `--per-host`.
    static let maxRequestsPerHost = 100_000

    /// The bounds `options` ask for, the defaults for what they leave out.
    ///
    /// - Throws: ``UsageError`` for a deadline that is not a duration (`90s`, `5m`, `1h`) from
    ///   1 s to 24 h, or a budget that is not a whole number from 1 to 100,000.
    static func discoveryBounds(_ options: CommandLineOptions) throws -> SiteDiscovery.Bounds {
        var bounds = defaultDiscoveryBounds
        if let text = options["--deadline"] {
            guard let seconds = durationSeconds(text), seconds >= 1, seconds <= Double(maxDiscoveryDeadline.components.seconds) else {
                throw UsageError("--deadline \"\(Terminal.safe(text, limit: 40))\" is not a duration from 1s to 24h; write 90s, 5m or 1h", usage: usage)
            }
            bounds.deadline = .milliseconds(Int64((seconds * 1000).rounded()))
        }
        if let text = options["--per-host"] {
            guard let count = Int(text), (1...maxRequestsPerHost).contains(count) else {
                throw UsageError("--per-host \"\(Terminal.safe(text, limit: 40))\" is not a whole number from 1 to \(maxRequestsPerHost)", usage: usage)
            }
            bounds.requestsPerHost = count
        }
        return bounds
    }

    /// Refuses `--deadline` and `--per-host` for what is not an OPML file: they would do nothing.
    static func refuseDiscoveryBounds(_ options: CommandLineOptions, _ what: String) throws {
        for flag in ["--deadline", "--per-host"] where options[flag] != nil {
            throw UsageError("\(flag) applies to an OPML file's sites, not to \(what)", usage: usage)
        }
    }

    /// `"90s"`, `"5m"`, `"1.5h"` in seconds, as the config writes durations.
    static func durationSeconds(_ text: String) -> Double? {
        guard let unit = text.last, let scale = ["s": 1.0, "m": 60.0, "h": 3600.0][String(unit)],
              let number = Double(text.dropLast()), number.isFinite else { return nil }
        return number * scale
    }

    /// `2m`, `90s`, `1h`: a duration as the flags write it.
    static func describe(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        if seconds >= 3600, seconds.truncatingRemainder(dividingBy: 3600) == 0 { return "\(Int(seconds / 3600))h" }
        if seconds >= 60, seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60))m" }
        return seconds.rounded() == seconds ? "\(Int(seconds))s" : String(format: "%.1fs", seconds)
    }
}
