import Foundation
import Synchronization

/// One scrape's exposition, made a piece at a time as the listener sends it: with 100,000 feeds
/// the page is 159 MB or more, which a daemon must not hold whole (issue 40).
///
/// Each family goes over every feed of the config in force, a few hundred kilobytes a piece.
/// A piece reads the feeds' numbers as they are when it is made, so one feed's histogram is
/// consistent in itself, while two families may be a moment apart, as with any exporter whose
/// collectors read in turn. A page of at most ``MetricsRegistry/cachedBytes`` made while nothing
/// changed is kept, and sent again while nothing it shows changes: scraping an idle daemon
/// costs little more than the send.
///
///     let page = registry.render()
///     let response = HTTPListener.Response(status: 200, contentType: "text/plain", stream: page.body)
public final class MetricsPage: Sendable {
    /// Where the page is: which family, which feed, and what of it is kept for the next scrape.
    private struct Cursor {
        var family = 0
        var feed = 0
        var begun = false
        /// Whether a sparse family's header is written (it is, before its first sample).
        var headed = false
        var done = false
        /// Everything made so far, while within ``MetricsRegistry/cachedBytes``.
        var kept: [UInt8]? = []
    }

    /// About how many bytes a piece holds: enough that a piece's bookkeeping is noise, little
    /// enough that a scrape costs the daemon no memory to speak of.
    static let pieceBytes = 256 << 10
    /// About what a feed takes on the page (15 lines of them its histogram): at least 1.5 KB.
    static let bytesPerFeed = 1_500

    private let registry: MetricsRegistry
    private let order: [String]
    private let generation: Int
    /// The page as the last scrape made it, when nothing in it has changed since.
    private let cached: [UInt8]?
    /// The process's figures and the media archive's, read when the scrape began.
    private let tail: [UInt8]
    private let cursor = Mutex(Cursor())

    init(registry: MetricsRegistry, generation: Int, cached: [UInt8]?, tail: [UInt8]) {
        self.registry = registry
        self.order = registry.state.withLock { $0.order }
        // A page that will not be kept is not gathered: past ``MetricsRegistry/cachedBytes`` the
        // gathering, doubling as it grows, held up to twice that for nothing.
        if order.count * Self.bytesPerFeed > MetricsRegistry.cachedBytes { cursor.withLock { $0.kept = nil } }
        self.generation = generation
        self.cached = cached
        self.tail = tail
    }

    /// The page as the listener sends it.
    public var body: HTTPListener.BodyStream { HTTPListener.BodyStream { self.next() } }

    /// The whole page at once (tests, and a caller that wants it whole).
    public func joined() -> [UInt8] {
        var all: [UInt8] = []
        while let piece = next() { all += piece }
        return all
    }

    /// The next piece of the page, `nil` after the last.
    public func next() -> [UInt8]? {
        cursor.withLock { cursor in
            guard !cursor.done else { return nil }
            if let cached {
                // Two pieces, the kept page shared rather than copied: an idle daemon's scrape
                // costs the send.
                defer { if cursor.begun { cursor.done = true } else { cursor.begun = true } }
                return cursor.begun ? tail : cached
            }
            var out = Exposition(capacity: Self.pieceBytes + 64 << 10)
            if !cursor.begun {
                cursor.begun = true
                out.family("feedsync_build_info", "gauge", "Always 1; the version label names the build.")
                out.sample("feedsync_build_info", [("version", registry.version)], 1)
            }
            while cursor.family < FeedFamily.all.count && out.bytes.count < Self.pieceBytes {
                write(FeedFamily.all[cursor.family], into: &out, at: &cursor)
            }
            let finished = cursor.family == FeedFamily.all.count
            if finished { registry.renderTotals(into: &out) }
            if let kept = cursor.kept?.count {
                if kept + out.bytes.count <= MetricsRegistry.cachedBytes { cursor.kept?.append(contentsOf: out.bytes) } else { cursor.kept = nil }
            }
            guard finished else { return out.bytes }
            cursor.done = true
            if let kept = cursor.kept, registry.state.withLock({ $0.generation }) == generation {
                registry.rendered.withLock { $0 = (generation, kept) }
            }
            return out.bytes + tail
        }
    }

    /// Writes `family` for as many feeds as fit the piece, and moves on to the next family
    /// after the last feed.
    private func write(_ family: FeedFamily, into out: inout Exposition, at cursor: inout Cursor) {
        if cursor.feed == 0 && !family.sparse { out.family(family.name, family.type, family.help) }
        registry.state.withLock { state in
            while cursor.feed < order.count && out.bytes.count < Self.pieceBytes {
                let name = order[cursor.feed]
                cursor.feed += 1
                guard let numbers = state.feeds[name] else { continue }
                if family.sparse && !cursor.headed {
                    guard family.shows(numbers) else { continue }
                    cursor.headed = true
                    out.family(family.name, family.type, family.help)
                }
                family.write(&out, name, numbers)
            }
        }
        if cursor.feed == order.count {
            cursor.family += 1
            cursor.feed = 0
            cursor.headed = false
        }
    }
}

/// A metric family with a sample (or several) per feed, as the page writes it.
struct FeedFamily: Sendable {
    let name: String
    let type: String
    let help: String
    /// Shown only once a feed has a sample of it (live streams: most feeds have none).
    var sparse = false
    /// Whether a feed has a sample (for a sparse family).
    var shows: @Sendable (MetricsRegistry.FeedNumbers) -> Bool = { _ in true }
    /// Writes one feed's samples.
    let write: @Sendable (inout Exposition, String, MetricsRegistry.FeedNumbers) -> Void

    /// Every per-feed family, in the page's order.
    static let all: [FeedFamily] = [
        FeedFamily(name: "feedsync_syncs_total", type: "counter", help: "Syncs finished, by feed and outcome (ok or failed).") { out, name, numbers in
            out.sample("feedsync_syncs_total", [("feed", name), ("outcome", "ok")], Double(numbers.ok))
            out.sample("feedsync_syncs_total", [("feed", name), ("outcome", "failed")], Double(numbers.failed))
        },
        FeedFamily(name: "feedsync_posts", type: "gauge", help: "Posts stored per feed (read from the store every few seconds).") { out, name, numbers in
            if let posts = numbers.posts { out.sample("feedsync_posts", [("feed", name)], Double(posts)) }
        },
        FeedFamily(name: "feedsync_last_success_timestamp_seconds", type: "gauge",
                   help: "When the feed last synced successfully, in Unix seconds.") { out, name, numbers in
            if let last = numbers.lastSuccess {
                out.sample("feedsync_last_success_timestamp_seconds", [("feed", name)], last.timeIntervalSince1970)
            }
        },
        FeedFamily(name: "feedsync_consecutive_failures", type: "gauge", help: "Failed syncs in a row per feed.") { out, name, numbers in
            out.sample("feedsync_consecutive_failures", [("feed", name)], Double(numbers.failures))
        },
        FeedFamily(name: "feedsync_sync_duration_seconds", type: "histogram", help: "How long each sync took.", write: writeDurations),
        FeedFamily(name: "feedsync_posts_written_total", type: "counter",
                   help: "Posts written per feed, by operation (insert, update, delete).") { out, name, numbers in
            for op in ["insert", "update", "delete"] {
                out.sample("feedsync_posts_written_total", [("feed", name), ("op", op)], Double(numbers.written[op]))
            }
        },
        FeedFamily(name: "feedsync_items_skipped_total", type: "counter",
                   help: "Items dropped per feed because they could not be read.") { out, name, numbers in
            out.sample("feedsync_items_skipped_total", [("feed", name)], Double(numbers.skipped))
        },
        FeedFamily(name: "feedsync_posts_filtered_total", type: "counter",
                   help: "Posts per feed that the rules blocked: not stored.") { out, name, numbers in
            out.sample("feedsync_posts_filtered_total", [("feed", name)], Double(numbers.filtered))
        },
        FeedFamily(name: "feedsync_stream_connected", type: "gauge", help: "1 while the feed's live stream is connected, 0 while it polls.",
                   sparse: true, shows: { $0.streamConnected != nil }) { out, name, numbers in
            if let connected = numbers.streamConnected { out.sample("feedsync_stream_connected", [("feed", name)], connected ? 1 : 0) }
        },
    ]

    /// The ends of the duration buckets as a sample line writes them, after the feed's label.
    private static let bounds = MetricsRegistry.durationBuckets.map { Array("\",le=\"\(Exposition.number($0))\"} ".utf8) }
        + [Array("\",le=\"+Inf\"} ".utf8)]

    /// The largest family by far (15 lines a feed): the feed's label is escaped once.
    private static func writeDurations(_ out: inout Exposition, _ name: String, _ numbers: MetricsRegistry.FeedNumbers) {
        var label = Exposition(capacity: name.utf8.count + 8)
        label.appendEscaped(name)
        for (index, bound) in bounds.enumerated() {
            out.bytes += "feedsync_sync_duration_seconds_bucket{feed=\"".utf8
            out.bytes += label.bytes
            out.bytes += bound
            out.append(Int64(index < numbers.durations.counts.count ? Int(numbers.durations.counts[index]) : numbers.durations.count))
            out.bytes.append(UInt8(ascii: "\n"))
        }
        out.sample("feedsync_sync_duration_seconds_sum", [("feed", name)], numbers.durations.sum)
        out.sample("feedsync_sync_duration_seconds_count", [("feed", name)], Double(numbers.durations.count))
    }
}
