import Core
import Foundation

/// The media archive's rows (``Core/MediaLedger``), the same on both stores: local state, so
/// written outside any feed's lease and committed as durably as a read mark.
extension SQLStore {
    public func recordMedia(_ references: [MediaReference], at now: Date) throws {
        guard !references.isEmpty else { return }
        try writingLocalState("recording \(references.count) media references") { db in
            for reference in references {
                for statement in Self.sql.recordMedia(reference, at: now) { try db.run(statement) }
            }
        }
    }

    public func mediaDue(limit: Int, includingSkipped: Bool) throws -> [(item: MediaItem, feed: String?)] {
        try query("reading the media to fetch", Self.sql.mediaDue(limit: limit, includingSkipped: includingSkipped)).compactMap { $0 }
    }

    public func recordMediaOutcomes(_ items: [MediaItem]) throws {
        guard !items.isEmpty else { return }
        // One transaction for a batch: a commit each would cost a sync of the disk per file.
        try writingLocalState("recording the fetch of \(items.count) media") { db in
            for item in items { try db.run(Self.sql.recordMediaOutcome(item)) }
        }
    }

    public func mediaSummary() throws -> MediaSummary {
        try withConnection("reading the media archive's counts") { db in
            var summary = MediaSummary()
            for (status, count) in try db.query(Self.sql.mediaStatusCounts()) {
                if let status = MediaStatus(rawValue: status) { summary.counts[status] = count }
            }
            if let totals = try db.query(Self.sql.mediaFileTotals()).first {
                summary.files = totals.files
                summary.bytes = totals.bytes
            }
            summary.skippedForRoom = summary.count(.skipped)
            return summary
        }
    }

    public func mediaHoldings() throws -> [MediaHolding] {
        try query("reading the media archive's files", Self.sql.mediaHoldings()).compactMap { $0 }
    }

    public func unreferencedMedia() throws -> [MediaItem] {
        try query("reading the media no post refers to", Self.sql.unreferencedMedia()).compactMap { $0 }
    }

    public func mediaRows(withDigest digest: String) throws -> Int {
        try query("counting the media rows of one file", Self.sql.mediaRows(withDigest: digest)).first ?? 0
    }

    public func removeMedia(_ urls: [URL]) throws {
        guard !urls.isEmpty else { return }
        try writingLocalState("removing \(urls.count) media rows") { db in
            for url in urls { try db.run(Self.sql.removeMedia(url)) }
        }
    }
}
