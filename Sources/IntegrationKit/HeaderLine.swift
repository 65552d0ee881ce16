/// One line of an answer's head, as libcurl hands it to a header callback, read as bytes.
///
/// Every transfer (``CurlTransport``, ``CurlDownloader``, the event stream) reads its answers'
/// fields through this one reading. A field's name loses the spaces and tabs around it and is
/// lowercased; its value loses the spaces, tabs and line ends around it (RFC 9110 §5.6.3's
/// optional whitespace, and the line's CRLF). Bytes that are not UTF-8 are repaired, never
/// trusted: the value is checked again where it is used.
///
///     switch HeaderLine(UnsafeRawBufferPointer(start: data, count: count)) {
///     case .status: fields.removeAll()        // after `100 Continue` or a redirect, a new answer
///     case .field(let name, let value): fields.append((name, value))
///     case .end, .other: break
///     }
enum HeaderLine: Equatable {
    /// A status line, `HTTP/1.1 200 OK`: a new answer's fields begin. Holds the line.
    case status(String)
    /// `name: value`, the name lowercased, both trimmed; the name may be empty.
    case field(name: String, value: String)
    /// The blank line that ends the head: CRLF, or a bare LF.
    case end
    /// Anything else: a line without a colon.
    case other

    init(_ line: UnsafeRawBufferPointer) {
        let bytes = line.assumingMemoryBound(to: UInt8.self)
        if bytes.starts(with: Self.statusPrefix) {
            self = .status(String(decoding: bytes, as: UTF8.self))
        } else if bytes.elementsEqual([0x0D, 0x0A]) || bytes.elementsEqual([0x0A]) {
            self = .end
        } else if let colon = bytes.firstIndex(of: UInt8(ascii: ":")) {
            let name = Self.trimmed(bytes[..<colon], Self.isSpace)
            let value = Self.trimmed(bytes[(colon + 1)...], { Self.isSpace($0) || Self.isLineEnd($0) })
            self = .field(name: Self.lowercased(name), value: String(decoding: value, as: UTF8.self))
        } else {
            self = .other
        }
    }

    private static let statusPrefix = Array("HTTP/".utf8)

    /// Space or horizontal tab: the optional whitespace around a field's parts.
    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    /// CR, LF, or the vertical tab and form feed that a line's end is trimmed of as well.
    private static func isLineEnd(_ byte: UInt8) -> Bool { (0x0A...0x0D).contains(byte) }

    private static func trimmed(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, _ trims: (UInt8) -> Bool) -> Slice<UnsafeBufferPointer<UInt8>> {
        guard let first = bytes.firstIndex(where: { !trims($0) }), let last = bytes.lastIndex(where: { !trims($0) }) else {
            return bytes[bytes.startIndex..<bytes.startIndex]
        }
        return bytes[first...last]
    }

    /// The name with ASCII capitals lowered; a name with other bytes goes through `String`'s
    /// own lowering, as it always did.
    private static func lowercased(_ name: Slice<UnsafeBufferPointer<UInt8>>) -> String {
        guard name.allSatisfy({ $0 < 0x80 }) else { return String(decoding: name, as: UTF8.self).lowercased() }
        return String(unsafeUninitializedCapacity: name.count) { buffer in
            for (offset, byte) in name.enumerated() { buffer[offset] = (0x41...0x5A).contains(byte) ? byte + 0x20 : byte }
            return name.count
        }
    }
}
