/// A text's bytes with zero or more layers of escapes undone, each byte knowing which bytes of
/// the original text it came from, so that what is found in the decoded text can be taken out
/// of the original.
///
/// One layer undoes, wherever they stand: percent-encoding (`%2B`, RFC 3986 §2.1) and, when
/// asked, the form encoding's `+` for a space; JSON's escapes (`\u00e9`, surrogate pairs, `\/`, `\"`,
/// RFC 8259 §7) and `\xHH`; HTML's character references (`&#233;`, `&#xE9;`, `&amp;`, `&lt;`,
/// `&gt;`, `&quot;`, `&apos;`). A server that percent-encodes JSON, or escapes a URL in HTML,
/// takes two layers.
struct EncodedView {
    let original: UnsafeBufferPointer<UInt8>
    /// The decoded bytes, and for each the range of original bytes it came from; `nil` for the
    /// original itself.
    private var layer: (bytes: [UInt8], starts: [Int32], ends: [Int32])?

    init(original: UnsafeBufferPointer<UInt8>) {
        self.original = original
    }

    func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        guard let layer else { return body(original) }
        return layer.bytes.withUnsafeBufferPointer(body)
    }

    /// The original bytes that `range` of this view's bytes came from.
    func originalRange(_ range: Range<Int>) -> Range<Int> {
        guard let layer else { return range }
        return Int(layer.starts[range.lowerBound])..<Int(layer.ends[range.upperBound - 1])
    }

    /// Whether the text holds a byte that starts an escape (or a `+`), so that decoding could change it.
    static func mayHoldEscapes(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.contains { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "+") }
    }

    /// This view with one more layer of escapes undone, or `nil` when there is none to undo.
    ///
    /// - Parameter plusAsSpace: whether a `+` is a space (a form's encoding) or itself (a
    ///   password's `+` in JSON): both are searched, so neither hides the other.
    func decoded(plusAsSpace: Bool = false) -> EncodedView? {
        withBytes { bytes in
            // Most texts hold nothing to undo (a `&` in a query, a `%` in a sentence): find the first escape before copying.
            guard let first = bytes.indices.first(where: { (plusAsSpace && bytes[$0] == UInt8(ascii: "+")) || Self.escape(at: $0, in: bytes) != nil })
            else { return nil }
            var out = Array(bytes[..<first]), starts: [Int32] = [], ends: [Int32] = []
            out.reserveCapacity(bytes.count)
            starts.reserveCapacity(bytes.count)
            ends.reserveCapacity(bytes.count)
            for index in 0..<first {
                let from = originalRange(index..<index + 1)
                starts.append(Int32(from.lowerBound))
                ends.append(Int32(from.upperBound))
            }
            var changed = false
            var index = first
            while index < bytes.count {
                let span: Int
                if plusAsSpace, bytes[index] == UInt8(ascii: "+") {
                    out.append(0x20)
                    span = 1
                    changed = true
                } else if let (value, length) = Self.escape(at: index, in: bytes) {
                    out.append(contentsOf: value)
                    span = length
                    changed = true
                } else {
                    out.append(bytes[index])
                    span = 1
                }
                let from = originalRange(index..<index + span)
                while starts.count < out.count {
                    starts.append(Int32(from.lowerBound))
                    ends.append(Int32(from.upperBound))
                }
                index += span
            }
            guard changed else { return nil }
            var view = EncodedView(original: original)
            view.layer = (out, starts, ends)
            return view
        }
    }

    /// The bytes an escape starting at `index` stands for, and its length; `nil` when no escape starts there.
    static func escape(at index: Int, in bytes: UnsafeBufferPointer<UInt8>) -> ([UInt8], Int)? {
        func hex(_ offset: Int, _ count: Int) -> UInt32? {
            guard index + offset + count <= bytes.count else { return nil }
            var value: UInt32 = 0
            for byte in bytes[(index + offset)..<(index + offset + count)] {
                guard let digit = hexDigit(byte) else { return nil }
                value = value << 4 | digit
            }
            return value
        }
        switch bytes[index] {
        case UInt8(ascii: "%"):
            return hex(1, 2).map { ([UInt8($0)], 3) }
        case UInt8(ascii: "\\") where index + 1 < bytes.count:
            switch bytes[index + 1] {
            case UInt8(ascii: "u"), UInt8(ascii: "U"):
                guard let unit = hex(2, 4) else { return nil }
                if (0xD800...0xDBFF).contains(unit) {
                    guard index + 7 < bytes.count, bytes[index + 6] == UInt8(ascii: "\\"), bytes[index + 7] | 0x20 == UInt8(ascii: "u"),
                          let low = hex(8, 4), (0xDC00...0xDFFF).contains(low) else { return nil }
                    return utf8(0x10000 + (unit - 0xD800) << 10 + (low - 0xDC00)).map { ($0, 12) }
                }
                return utf8(unit).map { ($0, 6) }
            case UInt8(ascii: "x"): return hex(2, 2).map { ([UInt8($0)], 4) }
            case UInt8(ascii: "b"): return ([0x08], 2)
            case UInt8(ascii: "f"): return ([0x0C], 2)
            case UInt8(ascii: "n"): return ([0x0A], 2)
            case UInt8(ascii: "r"): return ([0x0D], 2)
            case UInt8(ascii: "t"): return ([0x09], 2)
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "'"): return ([bytes[index + 1]], 2)
            default: return nil
            }
        case UInt8(ascii: "&"):
            return reference(at: index, in: bytes)
        default:
            return nil
        }
    }

    /// An HTML character reference (`&#65;`, `&#x41;`, `&amp;`) and its length.
    private static func reference(at index: Int, in bytes: UnsafeBufferPointer<UInt8>) -> ([UInt8], Int)? {
        let end = min(bytes.count, index + 12)
        guard let semicolon = bytes[(index + 1)..<end].firstIndex(of: UInt8(ascii: ";")), semicolon > index + 1 else { return nil }
        let name = bytes[(index + 1)..<semicolon]
        let length = semicolon + 1 - index
        switch String(decoding: name, as: UTF8.self) {
        case "amp": return ([UInt8(ascii: "&")], length)
        case "lt": return ([UInt8(ascii: "<")], length)
        case "gt": return ([UInt8(ascii: ">")], length)
        case "quot": return ([UInt8(ascii: "\"")], length)
        case "apos": return ([UInt8(ascii: "'")], length)
        default: break
        }
        guard name.first == UInt8(ascii: "#"), name.count >= 2 else { return nil }
        var value: UInt32 = 0
        if name.dropFirst().first.map({ $0 | 0x20 }) == UInt8(ascii: "x") {
            guard name.count >= 3 else { return nil }
            for byte in name.dropFirst(2) {
                guard let digit = hexDigit(byte), value <= 0x10FFFF else { return nil }
                value = value << 4 | digit
            }
        } else {
            for byte in name.dropFirst() {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), value <= 0x10FFFF else { return nil }
                value = value * 10 + UInt32(byte - UInt8(ascii: "0"))
            }
        }
        return utf8(value).map { ($0, length) }
    }

    private static func hexDigit(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    private static func utf8(_ value: UInt32) -> [UInt8]? {
        Unicode.Scalar(value).map { Array(String(Character($0)).utf8) }
    }
}
