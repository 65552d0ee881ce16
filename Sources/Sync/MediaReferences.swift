import Core
import Foundation

/// What one stored post points at that the archive keeps: its attachments' files and
/// previews, its videos' streams and thumbnails, its author's (and sharer's) avatar.
public enum MediaReferences {
    /// The references of `stored` of the kinds in `kinds`.
    ///
    /// A video whose stream is a web page (a YouTube watch URL) contributes its thumbnail only.
    public static func of(_ stored: StoredPost, kinds: Set<MediaKind>) -> [MediaReference] {
        var items: [MediaItem] = []
        let post = stored.post
        for attachment in post.attachments {
            let kind: MediaKind? = switch attachment.kind {
            case "image": .image
            case "video", "gifv": .video
            case "audio": .audio
            default: nil
            }
            if let kind {
                items.append(MediaItem(url: attachment.url, kind: kind, expectedType: attachment.mimeType, expectedBytes: attachment.sizeBytes))
            }
            if let preview = attachment.previewLink, preview != attachment.link { items.append(MediaItem(url: preview.url, kind: .image)) }
        }
        for video in stored.videos {
            if !video.id.rawValue.hasPrefix("youtube:") {
                items.append(MediaItem(url: video.streamURL, kind: .video, expectedBytes: video.sizeBytes))
            }
            if let thumbnail = video.thumbnailURL { items.append(MediaItem(url: thumbnail, kind: .image)) }
        }
        for avatar in [post.author.avatarURL, post.repost?.by.avatarURL].compactMap({ $0 }) {
            items.append(MediaItem(url: avatar, kind: .avatar))
        }
        var seen = Set<URL>()
        return items.filter { kinds.contains($0.kind) && isFetchable($0.url) && seen.insert($0.url).inserted }
            .map { MediaReference(feed: stored.feed, postID: post.id, postedAt: post.createdAt, item: $0) }
    }

    /// Only absolute http(s) addresses of at most 2,000 characters are fetched.
    static func isFetchable(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else { return false }
        return url.absoluteString.utf8.count <= 2000
    }
}
