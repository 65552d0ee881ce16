import Core
import Foundation
import IntegrationKit

/// Reads JSON Feed 1.0 and 1.1 (jsonfeed.org) with IntegrationKit's ``JSONReader``: 1.1's
/// `authors` and `language`, 1.0's `author`.
///
/// The `version` may be any `jsonfeed.org/version/…` URL, http or https (WordPress plugins write
/// `http://`). A field of the wrong type is ignored, as a missing one is; only a body that is not
/// JSON, or not a JSON Feed, is an error.
enum JSONFeedParser {
    /// One item as the document wrote it, before its URLs resolve against `feed_url` (which
    /// may come after the items).
    private struct ItemJSON {
        var id: String?
        var title: String?
        var url: String?
        var externalURL: String?
        var contentHTML: String?
        var contentText: String?
        var summary: String?
        var published: String?
        var modified: String?
        var authors: [AuthorJSON] = []
        var language: String?
        var tags: [String] = []
        var attachments: [AttachmentJSON] = []
    }

    private struct AuthorJSON {
        var name: String?
        var url: String?
    }

    private struct AttachmentJSON {
        var url: String?
        var mimeType: String?
        var size: Int?
        var title: String?
    }

    /// - Throws: ``WebFeedParseError`` when the body is not JSON or not a JSON Feed.
    static func parse(_ data: Data, feedURL: URL?) throws -> WebFeedDocument {
        var version: String?, title: String?, homePage: String?, declaredFeedURL: String?, language: String?
        var authors: [AuthorJSON] = []
        var items: [ItemJSON] = []
        do {
            try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
                var bytes = raw.bindMemory(to: UInt8.self)
                if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = UnsafeBufferPointer(rebasing: bytes.dropFirst(3)) }
                var reader = JSONReader(bytes)
                guard try reader.peek() == UInt8(ascii: "{") else { throw WebFeedParseError(reason: "the JSON Feed is not an object") }
                try reader.readObject { reader, key in
                    switch key {
                    case "version": version = try reader.lenient { try $0.optionalString("version") }
                    case "title": title = try reader.lenient { try $0.optionalString("title") }
                    case "home_page_url": homePage = try reader.lenient { try $0.optionalString("home_page_url") }
                    case "feed_url": declaredFeedURL = try reader.lenient { try $0.optionalString("feed_url") }
                    case "language": language = try reader.lenient { try $0.optionalString("language") }
                    case "authors": authors = try authorList(&reader)
                    case "author": if authors.isEmpty { authors = try author(&reader).map { [$0] } ?? [] } else { try reader.skipValue() }
                    case "items":
                        guard try reader.peek() == UInt8(ascii: "[") else { return try reader.skipValue() }
                        try reader.readArray { reader in
                            guard items.count < XMLFeedParser.maxEntries, try reader.peek() == UInt8(ascii: "{") else { return try reader.skipValue() }
                            items.append(try item(&reader))
                        }
                    default: try reader.skipValue()
                    }
                }
                guard reader.isAtEnd else { throw JSONReader.SyntaxError(offset: reader.offset, reason: "data follows the feed") }
            }
        } catch let error as JSONReader.SyntaxError {
            throw WebFeedParseError(reason: "the feed is not valid JSON (\(Terminal.safe(error.reason, limit: 120)) at byte \(error.offset))")
        }
        guard let version, version.hasPrefix("https://jsonfeed.org/version/") || version.hasPrefix("http://jsonfeed.org/version/") else {
            throw WebFeedParseError(reason: "the JSON document is not a JSON Feed: its \"version\" is not https://jsonfeed.org/version/…")
        }
        let base = FeedText.httpURL(declaredFeedURL, base: feedURL) ?? feedURL
        var document = WebFeedDocument(format: .jsonFeed)
        document.title = FeedText.singleLine(title)
        document.link = FeedText.httpURL(homePage, base: base)
        document.authors = people(authors, base: base)
        let feedLanguage = FeedText.clean(language, limit: 40)
        for item in items {
            var entry = WebFeedEntry()
            entry.id = FeedText.clean(item.id)
            entry.title = FeedText.singleLine(item.title)
            entry.link = FeedText.httpURL(item.url, base: base) ?? FeedText.httpURL(item.externalURL, base: base)
            entry.html = FeedText.content(item.contentHTML)
            entry.plainText = FeedText.content(item.contentText)
            if entry.html == nil && entry.plainText == nil { entry.plainText = FeedText.content(item.summary) }
            entry.published = FeedDate.date(from: item.published)
            entry.updated = FeedDate.date(from: item.modified)
            entry.authors = people(item.authors, base: base)
            entry.language = FeedText.clean(item.language, limit: 40) ?? feedLanguage
            entry.categories = item.tags.compactMap { FeedText.singleLine($0) }
            for attachment in item.attachments {
                guard let url = FeedText.httpURL(attachment.url, base: base) else { continue }
                entry.enclosures.append(WebFeedEnclosure(url: url, type: FeedText.clean(attachment.mimeType, limit: 200),
                                                         length: attachment.size.flatMap { $0 > 0 ? Int64($0) : nil },
                                                         title: FeedText.singleLine(attachment.title)))
            }
            document.entries.append(entry)
        }
        return document
    }

    private static func item(_ reader: inout JSONReader) throws -> ItemJSON {
        var item = ItemJSON()
        try reader.readObject { reader, key in
            switch key {
            case "id":
                // The spec says a string; some feeds send a number, which means the same.
                if try reader.peek() == UInt8(ascii: "\"") {
                    item.id = try reader.string("id")
                } else if let number = try reader.lenient({ try $0.optionalDouble("id") }) {
                    item.id = number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
                }
            case "title": item.title = try reader.lenient { try $0.optionalString("title") }
            case "url": item.url = try reader.lenient { try $0.optionalString("url") }
            case "external_url": item.externalURL = try reader.lenient { try $0.optionalString("external_url") }
            case "content_html": item.contentHTML = try reader.lenient { try $0.optionalString("content_html") }
            case "content_text": item.contentText = try reader.lenient { try $0.optionalString("content_text") }
            case "summary": item.summary = try reader.lenient { try $0.optionalString("summary") }
            case "date_published": item.published = try reader.lenient { try $0.optionalString("date_published") }
            case "date_modified": item.modified = try reader.lenient { try $0.optionalString("date_modified") }
            case "language": item.language = try reader.lenient { try $0.optionalString("language") }
            case "authors": item.authors = try authorList(&reader)
            case "author": if item.authors.isEmpty { item.authors = try author(&reader).map { [$0] } ?? [] } else { try reader.skipValue() }
            case "tags":
                guard try reader.peek() == UInt8(ascii: "[") else { return try reader.skipValue() }
                try reader.readArray { reader in
                    if let tag = try reader.lenient({ try $0.optionalString("tags") }) { item.tags.append(tag) }
                }
            case "attachments":
                guard try reader.peek() == UInt8(ascii: "[") else { return try reader.skipValue() }
                try reader.readArray { reader in
                    guard try reader.peek() == UInt8(ascii: "{") else { return try reader.skipValue() }
                    var attachment = AttachmentJSON()
                    try reader.readObject { reader, key in
                        switch key {
                        case "url": attachment.url = try reader.lenient { try $0.optionalString("url") }
                        case "mime_type": attachment.mimeType = try reader.lenient { try $0.optionalString("mime_type") }
                        case "title": attachment.title = try reader.lenient { try $0.optionalString("title") }
                        case "size_in_bytes": attachment.size = try reader.lenient { try $0.optionalWholeNumber("size_in_bytes") }
                        default: try reader.skipValue()
                        }
                    }
                    item.attachments.append(attachment)
                }
            default: try reader.skipValue()
            }
        }
        return item
    }

    /// 1.1's `authors` array.
    private static func authorList(_ reader: inout JSONReader) throws -> [AuthorJSON] {
        guard try reader.peek() == UInt8(ascii: "[") else {
            try reader.skipValue()
            return []
        }
        var list: [AuthorJSON] = []
        try reader.readArray { reader in
            if let one = try author(&reader) { list.append(one) }
        }
        return list
    }

    /// One author object (1.0's `author`, or an element of 1.1's `authors`); `nil` for anything else.
    private static func author(_ reader: inout JSONReader) throws -> AuthorJSON? {
        guard try reader.peek() == UInt8(ascii: "{") else {
            try reader.skipValue()
            return nil
        }
        var author = AuthorJSON()
        try reader.readObject { reader, key in
            switch key {
            case "name": author.name = try reader.lenient { try $0.optionalString("name") }
            case "url": author.url = try reader.lenient { try $0.optionalString("url") }
            default: try reader.skipValue()
            }
        }
        return author
    }

    private static func people(_ authors: [AuthorJSON], base: URL?) -> [WebFeedAuthor] {
        authors.compactMap { author in
            let person = WebFeedAuthor(name: FeedText.singleLine(author.name), email: nil, uri: FeedText.httpURL(author.url, base: base))
            return person.name == nil && person.uri == nil ? nil : person
        }
    }
}
