import Core
import Foundation

/// Turns a document's bytes into the UTF-8 the parsers read, in any encoding glibc's iconv
/// knows (GB2312/GBK/GB18030, Big5, Shift_JIS, EUC-JP, ISO-2022-JP, EUC-KR, KOI8-R/U,
/// windows-1250…1258, ISO-8859-1…16, Mac Roman…).
///
/// The encoding is found in the usual order: a byte-order mark, then the HTTP `charset`, then
/// the XML declaration, then an HTML `<meta>` charset; UTF-8 when none says. One exception: an
/// HTTP charset of ISO-8859-1, US-ASCII or windows-1252 (servers' defaults) yields to a
/// document that declares UTF-8 and is valid UTF-8. ISO-8859-1 and US-ASCII are read as
/// windows-1252, as browsers and feedparser read them.
enum FeedEncoding {
    /// A document in UTF-8, and how it was found to be.
    struct Decoded {
        var utf8: Data
        /// The encoding read, as named where it was found (`utf-8` when nothing said).
        var encoding: String
        /// Whether the bytes were taken as UTF-8 without conversion: the parser checks them, and
        /// ``windows1252Fallback(_:)`` reads them again when they are not UTF-8.
        var isUnconvertedUTF8: Bool
        /// What is worth one line in the log (bytes replaced, a fallback).
        var note: String?
    }

    /// - Parameter httpCharset: the `charset` of the response's `Content-Type`, if any.
    /// - Throws: ``WebFeedParseError`` for an encoding iconv does not know.
    static func decode(_ data: Data, httpCharset: String? = nil) throws -> Decoded {
        let head = [UInt8](data.prefix(4))
        if head.starts(with: [0xEF, 0xBB, 0xBF]) { return Decoded(utf8: data.dropFirst(3), encoding: "utf-8", isUnconvertedUTF8: true) }
        if head.starts(with: [0xFF, 0xFE, 0, 0]) { return try convert(data.dropFirst(4), from: "UTF-32LE", named: "utf-32") }
        if head.starts(with: [0, 0, 0xFE, 0xFF]) { return try convert(data.dropFirst(4), from: "UTF-32BE", named: "utf-32") }
        if head.starts(with: [0xFF, 0xFE]) { return try convert(data.dropFirst(2), from: "UTF-16LE", named: "utf-16") }
        if head.starts(with: [0xFE, 0xFF]) { return try convert(data.dropFirst(2), from: "UTF-16BE", named: "utf-16") }
        // UTF-32 without a mark, and EBCDIC, told by how `<?xm` or `<` is written (XML 1.0 appendix F).
        if head == [0, 0, 0, 0x3C] { return try convert(data, from: "UTF-32BE", named: "utf-32") }
        if head == [0x3C, 0, 0, 0] { return try convert(data, from: "UTF-32LE", named: "utf-32") }
        if head == [0x4C, 0x6F, 0xA7, 0x94] {
            // The declaration, read in EBCDIC's invariant characters, names the code page.
            let declaration = try convert(data.prefix(200), from: "IBM037", named: "ebcdic", relabelling: false).utf8
            return try convert(data, from: iconvName(declaredEncoding(declaration) ?? "IBM037"), named: declaredEncoding(declaration) ?? "ebcdic")
        }
        // UTF-16 without a mark, told by how `<?` or `<` is written (XML 1.0 appendix F).
        if head.starts(with: [0x3C, 0, 0x3F, 0]) { return try convert(data, from: "UTF-16LE", named: "utf-16") }
        if head.starts(with: [0, 0x3C, 0, 0x3F]) { return try convert(data, from: "UTF-16BE", named: "utf-16") }

        let declared = declaredEncoding(data)
        var label = httpCharset.flatMap(usable) ?? declared ?? metaCharset(data)
        if let http = httpCharset.flatMap(usable), isWindows1252(http), let declared, isUTF8(declared),
           String(validating: data, as: UTF8.self) != nil {
            label = declared
        }
        guard let label else { return Decoded(utf8: data, encoding: "utf-8", isUnconvertedUTF8: true) }
        if isUTF8(label) { return Decoded(utf8: data, encoding: label, isUnconvertedUTF8: true) }
        if isWindows1252(label) { return Decoded(utf8: Data(windows1252(data).utf8), encoding: label, isUnconvertedUTF8: false) }
        if label.lowercased().hasPrefix("utf-16") || label.lowercased().hasPrefix("utf-32") {
            // Read as ASCII to find this label, so the bytes are not UTF-16 (or 32).
            throw WebFeedParseError(reason: "the document declares \(Terminal.safeName(label)) but has no byte-order mark and is not in it")
        }
        return try convert(data, from: iconvName(label), named: label)
    }

    /// The same bytes read as windows-1252: for a document that says UTF-8 and is not, as
    /// feedparser reads it.
    static func windows1252Fallback(_ data: Data) -> Data { Data(windows1252(data).utf8) }

    /// The `charset` parameter of a `Content-Type` field value.
    static func charset(ofContentType value: String?) -> String? {
        guard let value else { return nil }
        for parameter in value.split(separator: ";").dropFirst() {
            let parts = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2, parts[0].lowercased() == "charset" { return usable(parts[1].trimmingCharacters(in: ["\"", "'"])) }
        }
        return nil
    }

    /// The `encoding` of the XML declaration, if the document starts with one (after white space).
    static func declaredEncoding(_ data: Data) -> String? {
        let head = String(decoding: data.prefix(512), as: UTF8.self)
        guard let open = head.range(of: "<?xml"), head[..<open.lowerBound].allSatisfy(\.isWhitespace),
              let end = head.range(of: "?>", range: open.upperBound..<head.endIndex) else { return nil }
        return attribute("encoding", in: head[open.upperBound..<end.lowerBound])
    }

    /// The charset of an HTML `<meta charset>` or `<meta http-equiv content="…; charset=…">` in
    /// the first 1,024 bytes, as HTML's prescan finds it.
    static func metaCharset(_ data: Data) -> String? {
        let head = String(decoding: data.prefix(1024), as: UTF8.self).lowercased()
        var rest = head[...]
        while let meta = rest.range(of: "<meta") {
            let tag = rest[meta.upperBound...].prefix(while: { $0 != ">" })
            if let value = attribute("charset", in: tag) { return usable(value) }
            if let content = attribute("content", in: tag), let key = content.range(of: "charset=") {
                return usable(String(content[key.upperBound...].prefix(while: { $0 != ";" && $0 != " " })))
            }
            rest = rest[meta.upperBound...]
        }
        return nil
    }

    /// `name="value"` (or `'value'`, or unquoted) in the text of a tag.
    private static func attribute(_ name: String, in text: Substring) -> String? {
        var rest = text
        while let key = rest.range(of: name) {
            let after = rest[key.upperBound...].drop(while: { $0 == " " })
            guard after.first == "=" else { rest = rest[key.upperBound...]; continue }
            let value = after.dropFirst().drop(while: { $0 == " " })
            if let quote = value.first, quote == "\"" || quote == "'" {
                return String(value.dropFirst().prefix(while: { $0 != quote }))
            }
            return String(value.prefix(while: { !$0.isWhitespace && $0 != ">" && $0 != "/" && $0 != ";" }))
        }
        return nil
    }

    /// A label worth trying: printable ASCII of a sane length.
    private static func usable(_ label: String) -> String? {
        let trimmed = label.trimmingCharacters(in: .whitespaces)
        guard (1...40).contains(trimmed.utf8.count), trimmed.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        return trimmed
    }

    private static func isUTF8(_ label: String) -> Bool { ["utf-8", "utf8", "unicode-1-1-utf-8"].contains(label.lowercased()) }

    /// Labels read as windows-1252, as the WHATWG Encoding Standard maps them.
    private static func isWindows1252(_ label: String) -> Bool {
        ["windows-1252", "cp1252", "x-cp1252", "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "us-ascii",
         "ascii", "ansi_x3.4-1968", "iso-ir-100", "cp819", "ibm819", "csisolatin1"].contains(label.lowercased())
    }

    /// The name glibc's iconv knows for a label feeds use.
    private static func iconvName(_ label: String) -> String {
        switch label.lowercased() {
        // GB2312 documents are GBK in practice (browsers read them so); GB18030 holds both.
        case "gb2312", "gbk", "x-gbk", "csgb2312", "chinese", "gb_2312-80": return "GB18030"
        case "x-mac-roman", "macroman", "mac-roman", "macintosh", "x-mac": return "MACINTOSH"
        case "x-sjis", "shift-jis", "ms_kanji", "csshiftjis": return "SHIFT_JIS"
        case "windows-31j", "cp932": return "CP932"
        case "x-euc-jp": return "EUC-JP"
        case "big5-hkscs": return "BIG5-HKSCS"
        case "x-big5", "cn-big5", "csbig5": return "BIG5"
        case "ks_c_5601-1987", "korean", "csksc56011987", "windows-949", "cp949": return "CP949"
        // Python's codec names, which feeds written by Python tools declare.
        case "maccentraleurope", "maclatin2", "x-mac-ce": return "MAC-CENTRALEUROPE"
        case "maciceland", "x-mac-icelandic": return "MAC-IS"
        case "maccyrillic", "x-mac-cyrillic": return "MAC-CYRILLIC"
        case "cp_is", "csibm861": return "IBM861"
        // `windows_1252`, `ebcdic_cp_us`, `iso8859_7`: Python's spelling of iconv's names.
        default: return label.uppercased().replacingOccurrences(of: "_", with: "-")
        }
    }

    /// `data` converted by iconv; a byte that is not in the encoding becomes U+FFFD, counted in the note.
    ///
    /// - Parameter relabelling: make the XML declaration say UTF-8, as the bytes now are.
    private static func convert(_ data: Data, from encoding: String, named label: String, relabelling: Bool = true) throws -> Decoded {
        var converter = iconv_open("UTF-8", encoding)
        if converter == iconv_t(bitPattern: -1), encoding.contains("-") {
            // iconv spells some names without the hyphen Python and feeds put in (ISO8859-7, CP1252).
            converter = iconv_open("UTF-8", encoding.replacingOccurrences(of: "-", with: ""))
        }
        guard let converter, converter != iconv_t(bitPattern: -1) else {
            throw WebFeedParseError(reason: "the document is in \(Terminal.safeName(label)), an encoding feedsync does not know")
        }
        defer { iconv_close(converter) }
        var output = Data(count: data.count * 4 + 16)
        var replaced = 0
        var written = 0
        data.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
            output.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) in
                var inPointer = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: CChar.self))
                var inLeft = input.count
                var outPointer = out.baseAddress?.assumingMemoryBound(to: CChar.self)
                var outLeft = out.count - 8
                while inLeft > 0 {
                    if iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft) != -1 { break }
                    guard errno == EILSEQ || errno == EINVAL, outLeft >= 3 else { break }
                    // Not in the encoding (or cut off at the end): one replacement character, then on.
                    for byte: UInt8 in [0xEF, 0xBF, 0xBD] {
                        outPointer?.pointee = CChar(bitPattern: byte)
                        outPointer = outPointer.map { $0 + 1 }
                    }
                    outLeft -= 3
                    replaced += 1
                    inPointer = inPointer.map { $0 + 1 }
                    inLeft -= 1
                    // A stateful encoding (ISO-2022-JP) starts again from its initial state.
                    iconv(converter, nil, nil, nil, nil)
                }
                _ = iconv(converter, nil, nil, &outPointer, &outLeft)
                written = out.count - 8 - outLeft
            }
        }
        output.count = written
        let note = replaced == 0 ? nil : "\(replaced) bytes are not \(Terminal.safe(label, limit: 40)) and were read as U+FFFD"
        return Decoded(utf8: relabelling ? declaringUTF8(output) : output, encoding: label, isUnconvertedUTF8: false, note: note)
    }

    /// A converted document whose XML declaration names its old encoding says UTF-8 instead: the
    /// parser ignores the name, but still refuses one XML does not allow (`encoding="437"`).
    private static func declaringUTF8(_ data: Data) -> Data {
        // The declaration is ASCII and comes first: only the bytes up to its end are read.
        guard let close = data.prefix(512).firstRange(of: Data("?>".utf8)),
              let text = String(data: data[data.startIndex..<close.upperBound], encoding: .utf8),
              let open = text.range(of: "<?xml"), text[..<open.lowerBound].allSatisfy(\.isWhitespace),
              let match = text[open.upperBound...].firstMatch(of: /encoding\s*=\s*(?:"[^"]*"|'[^']*')/) else { return data }
        let replaced = text.replacingCharacters(in: match.range, with: "encoding=\"UTF-8\"")
        return Data(replaced.utf8) + data[close.upperBound...]
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
