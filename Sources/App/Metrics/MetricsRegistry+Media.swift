import Core
import Foundation

extension MetricsRegistry {
    /// The media archive's counts and bytes, read from the store after each media run.
    public func updateMedia(_ summary: MediaSummary) {
        media.withLock { $0 = summary }
    }

    /// `feedsync_media_items{status=…}`, `feedsync_media_files` and `feedsync_media_bytes`, once the archive has run.
    func renderMedia(into out: inout Exposition) {
        guard let summary = media.withLock({ $0 }) else { return }
        out.family("feedsync_media_items", "gauge", "Addresses in the media archive, by status (pending, fetched, failed, refused, skipped).")
        for status in MediaStatus.allCases {
            out.sample("feedsync_media_items", [("status", status.rawValue)], Double(summary.count(status)))
        }
        out.family("feedsync_media_files", "gauge", "Distinct files in the media archive (the same bytes under two addresses are one).")
        out.sample("feedsync_media_files", [], Double(summary.files))
        out.family("feedsync_media_bytes", "gauge", "Bytes of the media archive's files.")
        out.sample("feedsync_media_bytes", [], Double(summary.bytes))
    }

    /// The whole exposition as one string (tests).
    func renderedText() -> String {
        String(decoding: render().joined(), as: UTF8.self)
    }
}
