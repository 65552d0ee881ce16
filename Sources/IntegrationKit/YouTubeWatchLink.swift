import Foundation

/// A YouTube watch URL as posts link videos: `https://www.youtube.com/watch?v=ID`,
/// `https://youtu.be/ID`, `/shorts/ID` or `/embed/ID`, ID being YouTube's 11 characters.
///
/// Shared plumbing for the same reason as ``PeerTubeWatchLink``: a web feed finds the links,
/// the YouTube video host resolves them.
public enum YouTubeWatchLink {
    /// The video's id; `nil` for any other URL.
    public static func videoID(in url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", let host = url.host?.lowercased() else { return nil }
        let parts = url.path.split(separator: "/").map(String.init)
        let candidate: String?
        switch host {
        case "youtu.be": candidate = parts.count == 1 ? parts[0] : nil
        case "youtube.com", "www.youtube.com", "m.youtube.com":
            if parts == ["watch"] {
                candidate = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "v" }?.value
            } else if parts.count == 2, ["shorts", "embed", "live"].contains(parts[0]) {
                candidate = parts[1]
            } else {
                candidate = nil
            }
        default: candidate = nil
        }
        guard let id = candidate, id.utf8.count == 11,
              id.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || $0 == 45 || $0 == 95 }) else { return nil }
        return id
    }
}
