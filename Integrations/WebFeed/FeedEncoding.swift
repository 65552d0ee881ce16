import Core
import Foundation

/// Turns a feed's bytes into UTF-8 the XML parser reads, honouring a byte-order mark or the
/// encoding the XML declaration names (ISO-8859-1, windows-1252, US-ASCII, UTF-16).
enum FeedEncoding {
    /// The document as UTF-8, with its BOM dropped and its declaration saying UTF-8.
    ///
    /// - Throws: ``WebFeedParseError`` for an encoding feedsync does not read, or bytes that
    ///   are not in the encoding declared.
    static func utf8(_ data: Data) throws -> Data {
        let bytes = [UInt8](data.prefix(4))
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return try utf8(Data(data.dropFirst(3)), declaredOnly: true) }
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            let encoding: String.Encoding = bytes[0] == 0xFF ? .utf16LittleEndian : .utf16BigEndian
            guard let text = String(data: data.dropFirst(2), encoding: encoding) else {
                throw WebFeedParseError(reason: "the document starts with a UTF-16 byte-order mark but is not UTF-16")
            }
            return Data(declaringUTF8(text).utf8)
        }
        return try utf8(data, declaredOnly: false)
    }

    private static func utf8(_ data: Data, declaredOnly: Bool) throws -> Data {
        guard let declared = declaredEncoding(data) else { return data }
        switch declared.lowercased() {
        case "utf-8", "utf8":
            return data
        case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "us-ascii", "ascii":
            // Latin-1 maps every byte, so this cannot fail.
            return Data(declaringUTF8(String(decoding: data.map { UInt16($0) }, as: UTF16.self)).utf8)
        case "windows-1252", "cp1252", "x-cp1252":
            return Data(declaringUTF8(windows1252(data)).utf8)
        case "utf-16", "utf-16le", "utf-16be":
            // Without a BOM the bytes were read as ASCII to find this: they are not UTF-16.
            throw WebFeedParseError(reason: "the document declares \(declared) but has no byte-order mark")
        default:
            throw WebFeedParseError(reason: "the document is in \(Terminal.safeName(declared)), an encoding feedsync does not read "
                                    + "(it reads UTF-8, UTF-16, ISO-8859-1 and windows-1252)")
        }
    }

    /// The `encoding` of the XML declaration, if the document starts with one.
    static func declaredEncoding(_ data: Data) -> String? {
        let head = String(decoding: data.prefix(256), as: UTF8.self)
        guard head.hasPrefix("<?xml"), let end = head.range(of: "?>") else { return nil }
        let declaration = head[..<end.lowerBound]
        guard let key = declaration.range(of: "encoding") else { return nil }
        let rest = declaration[key.upperBound...].drop(while: { $0 == " " || $0 == "=" })
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        return String(rest.dropFirst().prefix(while: { $0 != quote }))
    }

    /// `text` with its XML declaration's encoding changed to UTF-8.
    private static func declaringUTF8(_ text: String) -> String {
        guard text.hasPrefix("<?xml"), let end = text.range(of: "?>") else { return text }
        let declaration = String(text[..<end.lowerBound])
        guard let key = declaration.range(of: "encoding") else { return text }
        let rest = declaration[key.upperBound...]
        guard let open = rest.firstIndex(where: { $0 == "\"" || $0 == "'" }),
              let close = rest[rest.index(after: open)...].firstIndex(of: rest[open]) else { return text }
        return String(declaration[..<key.lowerBound]) + "encoding=\"UTF-8\"" + String(declaration[rest.index(after: close)...])
            + String(text[end.lowerBound...])
    }

    /// windows-1252: Latin-1 but for 0x80–0x9F, which hold typographic characters.
    private static func windows1252(_ data: Data) -> String {
        let high: [UInt16] = [0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
                              0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178]
        return String(decoding: data.map { (0x80...0x9F).contains($0) ? high[Int($0) - 0x80] : UInt16($0) }, as: UTF16.self)
    }
}

extension Terminal {
    /// A short name from a document, safe to print.
    static func safeName(_ text: String) -> String { "\"\(safe(text, limit: 40))\"" }
}
