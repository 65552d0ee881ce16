import Core
import Foundation

/// The `"mediaarchive"` integration: the local media archive (`docs/media.md`). The app reads the
/// config's `"media"` sections (their keys are in its key table); this integration keeps the
/// files: content-addressed, fetched under the same hostile-input rules as feeds.
public enum MediaArchiveIntegration {
    public static let descriptor = IntegrationDescriptor(
        name: "mediaarchive", summary: "the local media archive: content-addressed copies of what the posts point at",
        example: #"{"path": "media", "maxBytes": "20GB", "kinds": ["image", "video", "audio", "avatar"], "maxItemBytes": "500MB"}"#,
        keys: MediaArchiveCapability.keys,
        media: MediaArchiveCapability { folder, log in try MediaFetcher(folder: folder, log: log) })
}
