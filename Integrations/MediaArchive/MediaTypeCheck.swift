import Core

/// Whether the `Content-Type` a server sent fits what the post said the media is.
enum MediaTypeCheck {
    /// Types a server may send for any audio or video file.
    static let generic: Set<String> = ["application/octet-stream", "binary/octet-stream"]
    /// An HLS playlist's types (RFC 8216 §4).
    static let playlist: Set<String> = ["application/vnd.apple.mpegurl", "application/x-mpegurl", "audio/mpegurl"]

    /// A sentence saying why `received` does not fit, or `nil` when it does (or says nothing).
    ///
    /// An image must come as `image/*`; a video as `video/*`, an HLS playlist type or a generic
    /// binary type; audio as `audio/*`, `video/*` (a podcast's MP4) or a generic binary type.
    /// When the post gave a type, the major type (`image` of `image/png`) must match it.
    static func mismatch(kind: MediaKind, expected: String?, received: String?) -> String? {
        guard let received, let type = received.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased(),
              !type.isEmpty else { return nil }
        let major = type.split(separator: "/").first.map(String.init) ?? type
        let fits: Bool
        switch kind {
        case .image, .avatar: fits = major == "image"
        case .video: fits = major == "video" || playlist.contains(type) || generic.contains(type)
        case .audio: fits = major == "audio" || major == "video" || generic.contains(type)
        }
        let expectedMajor = expected?.split(separator: "/").first?.lowercased()
        let agrees = expectedMajor == nil || expectedMajor == major || generic.contains(type) || playlist.contains(type)
            || (expectedMajor == "audio" && major == "video")
        guard !fits || !agrees else { return nil }
        let said = expected.map { "\(Terminal.safe($0, limit: 60))" } ?? "\(kind.rawValue)"
        return "the server sent \(Terminal.safe(type, limit: 60)) where the post said \(said)"
    }
}
