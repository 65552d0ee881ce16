import Foundation

/// Media RSS, YouTube's `yt:` and the iTunes podcast namespace, as far as an entry's posts,
/// videos and attachments use them.
extension XMLFeedParser {
    /// Files a closed element of these namespaces into the entry; whether it was one of theirs.
    /// Media RSS elements count wherever they are in the entry (`media:group` nests them).
    func endMediaField(_ frame: Frame) -> Bool {
        let attributes = frame.attributes
        switch (frame.namespace, frame.name) {
        case (Namespace.media, "content"):
            guard let url = FeedText.httpURL(attributes["url"], base: frame.base) else { return true }
            entry?.media.contents.append(WebFeedMediaContent(
                url: url, type: FeedText.clean(attributes["type"], limit: 200), medium: FeedText.clean(attributes["medium"], limit: 40)?.lowercased(),
                duration: attributes["duration"].flatMap(Self.seconds), fileSize: attributes["fileSize"].flatMap(Self.length),
                width: attributes["width"].flatMap(Self.count), height: attributes["height"].flatMap(Self.count)))
        case (Namespace.media, "thumbnail"):
            // The first is the one to show (YouTube sends one; others list the largest first).
            if entry?.media.thumbnail == nil { entry?.media.thumbnail = FeedText.httpURL(attributes["url"], base: frame.base) }
        case (Namespace.media, "title"):
            entry?.media.title = FeedText.singleLine(frame.text)
        case (Namespace.media, "description"):
            entry?.media.description = FeedText.content(frame.text)
        case (Namespace.media, "statistics"):
            entry?.media.views = attributes["views"].flatMap(Self.length)
        case (Namespace.media, "starRating"):
            entry?.media.ratings = attributes["count"].flatMap(Self.length)
            entry?.media.averageRating = attributes["average"].flatMap { Double($0) }.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        case (Namespace.media, _):
            break
        case (Namespace.youTube, "videoId"):
            guard inEntryDirectly, let id = FeedText.singleLine(frame.text), id.count <= 64,
                  id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return true }
            entry?.youTubeVideoID = id
        case (Namespace.youTube, _):
            break
        case (Namespace.itunes, let name):
            guard inEntryDirectly else { return true }
            switch name {
            case "duration": entry?.episode.duration = Self.seconds(frame.text)
            case "episode": entry?.episode.number = Self.count(frame.text)
            case "season": entry?.episode.season = Self.count(frame.text)
            case "image": entry?.episode.image = FeedText.httpURL(attributes["href"], base: frame.base)
            case "summary", "subtitle": if entry?.episode.summary == nil || name == "summary" { entry?.episode.summary = FeedText.content(frame.text) }
            case "author": entry?.episode.author = FeedText.singleLine(frame.text)
            default: break
            }
        default:
            return false
        }
        return true
    }

    /// A duration: seconds (`3723`, `3723.5`) or `H:MM:SS` / `MM:SS`, as podcasts and Media RSS write it.
    static func seconds(_ text: String) -> Double? {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var total = 0.0
        for (index, part) in parts.enumerated() {
            guard let value = Double(part), value.isFinite, value >= 0, index == 0 || value < 60 else { return nil }
            total = total * 60 + value
        }
        return total < 1e7 ? total : nil
    }

    /// A small whole number (an episode, a width), or nothing.
    static func count(_ text: String) -> Int? {
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), (0...10_000_000).contains(value) else { return nil }
        return value
    }
}
