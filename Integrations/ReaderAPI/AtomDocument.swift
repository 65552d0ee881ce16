import Core
import Foundation

/// A page of a served feed as Atom 1.0 (RFC 4287): each post an entry with its author (a boost:
/// the original's author, and the sharer as contributor), its text as escaped HTML, its
/// permalink, its attachments and videos as enclosures, a boost's sharer first in its content, and RFC 5005's `next` link to the page after.
enum AtomDocument {
    static func render(title: String, selfURL: String, nextURL: String?, posts: [StoredPost]) -> [UInt8] {
        var xml = #"<?xml version="1.0" encoding="utf-8"?>"# + "\n" + #"<feed xmlns="http://www.w3.org/2005/Atom">"#
        xml += "<title>\(escaped(title))</title><id>\(escaped(selfURL))</id>"
        xml += "<updated>\(ISO8601Timestamp.string(from: newest(posts)))</updated>"
        xml += "<generator>feedsync</generator>"
        xml += #"<link rel="self" href="\#(escaped(selfURL))"/>"#
        if let nextURL { xml += #"<link rel="next" href="\#(escaped(nextURL))"/>"# }
        for stored in posts { xml += entry(stored) }
        xml += "</feed>\n"
        return Array(xml.utf8)
    }

    static func newest(_ posts: [StoredPost]) -> Date {
        posts.map { $0.post.editedAt ?? $0.post.createdAt }.max() ?? Date(timeIntervalSince1970: 0)
    }

    private static func entry(_ stored: StoredPost) -> String {
        let post = stored.post
        var xml = "<entry><id>\(ItemID(feed: stored.feed, post: post.id).long)</id>"
        xml += "<title>\(escaped(GReaderJSON.title(of: stored)))</title>"
        xml += "<published>\(ISO8601Timestamp.string(from: post.createdAt))</published>"
        xml += "<updated>\(ISO8601Timestamp.string(from: post.editedAt ?? post.createdAt))</updated>"
        xml += "<author><name>\(escaped(name(post.author)))</name></author>"
        if let repost = post.repost { xml += "<contributor><name>\(escaped(name(repost.by)))</name></contributor>" }
        if let link = post.link { xml += #"<link rel="alternate" type="text/html" href="\#(escaped(link.absoluteString))"/>"# }
        for enclosure in Enclosure.of(stored) {
            xml += #"<link rel="enclosure" href="\#(escaped(enclosure.url))""#
            if let type = enclosure.type { xml += #" type="\#(escaped(type))""# }
            if let length = enclosure.length, length >= 0 { xml += #" length="\#(length)""# }
            xml += "/>"
        }
        xml += #"<content type="html">\#(escaped(Boost.html(post)))</content></entry>"#
        return xml
    }

    static func name(_ user: User) -> String { user.displayName.isEmpty ? user.handle : "\(user.displayName) (@\(user.handle))" }

    /// Text as XML character data or an attribute value: the five markup characters escaped,
    /// and the characters XML 1.0 cannot hold (C0 controls but tab and line ends, U+FFFE, U+FFFF)
    /// replaced by U+FFFD.
    static func escaped(_ text: String) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
