import Core
import Foundation

/// Reads JSON Feed 1.0 and 1.1 (jsonfeed.org): 1.1's `authors` and `language`, 1.0's `author`.
enum JSONFeedParser {
    /// - Throws: ``WebFeedParseError`` when the body is not JSON or not a JSON Feed.
    static func parse(_ data: Data, feedURL: URL?) throws -> WebFeedDocument {
        var body = data
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = Data(body.dropFirst(3)) }
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: body, options: [])
        } catch {
            throw WebFeedParseError(reason: "the feed is not valid JSON (\(Terminal.safe((error as NSError).localizedDescription, limit: 160)))")
        }
        guard let feed = root as? [String: Any] else { throw WebFeedParseError(reason: "the JSON Feed is not an object") }
        guard let version = feed["version"] as? String, version.hasPrefix("https://jsonfeed.org/version/") else {
            throw WebFeedParseError(reason: "the JSON document is not a JSON Feed: its \"version\" is not https://jsonfeed.org/version/…")
        }
        let base = (feed["feed_url"] as? String).flatMap { FeedText.httpURL($0, base: feedURL) } ?? feedURL
        var document = WebFeedDocument(format: .jsonFeed)
        document.title = FeedText.singleLine(feed["title"] as? String)
        document.link = FeedText.httpURL(feed["home_page_url"] as? String, base: base)
        document.authors = authors(feed, base: base)
        let language = FeedText.clean(feed["language"] as? String, limit: 40)
        for case let item as [String: Any] in (feed["items"] as? [Any] ?? []).prefix(XMLFeedParser.maxEntries) {
            var entry = WebFeedEntry()
            // The spec says a string; some feeds send a number, which means the same.
            switch item["id"] {
            case let id as String: entry.id = FeedText.clean(id)
            case let id as NSNumber: entry.id = id.stringValue
            default: break
            }
            entry.title = FeedText.singleLine(item["title"] as? String)
            entry.link = FeedText.httpURL(item["url"] as? String, base: base) ?? FeedText.httpURL(item["external_url"] as? String, base: base)
            entry.html = FeedText.content(item["content_html"] as? String)
            entry.plainText = FeedText.content(item["content_text"] as? String)
            if entry.html == nil && entry.plainText == nil { entry.plainText = FeedText.content(item["summary"] as? String) }
            entry.published = FeedDate.date(from: item["date_published"] as? String)
            entry.updated = FeedDate.date(from: item["date_modified"] as? String)
            entry.authors = authors(item, base: base)
            entry.language = FeedText.clean(item["language"] as? String, limit: 40) ?? language
            entry.categories = (item["tags"] as? [Any] ?? []).compactMap { FeedText.singleLine($0 as? String) }
            for case let attachment as [String: Any] in item["attachments"] as? [Any] ?? [] {
                guard let url = FeedText.httpURL(attachment["url"] as? String, base: base) else { continue }
                let size = (attachment["size_in_bytes"] as? NSNumber).map { $0.int64Value }.flatMap { $0 > 0 ? $0 : nil }
                entry.enclosures.append(WebFeedEnclosure(url: url, type: FeedText.clean(attachment["mime_type"] as? String, limit: 200),
                                                         length: size, title: FeedText.singleLine(attachment["title"] as? String)))
            }
            document.entries.append(entry)
        }
        return document
    }

    /// 1.1's `authors` array, else 1.0's single `author`.
    private static func authors(_ object: [String: Any], base: URL?) -> [WebFeedAuthor] {
        let list = (object["authors"] as? [Any]) ?? (object["author"].map { [$0] } ?? [])
        return list.compactMap { value in
            guard let author = value as? [String: Any] else { return nil }
            let person = WebFeedAuthor(name: FeedText.singleLine(author["name"] as? String), email: nil,
                                       uri: FeedText.httpURL(author["url"] as? String, base: base))
            return person.name == nil && person.uri == nil ? nil : person
        }
    }
}
