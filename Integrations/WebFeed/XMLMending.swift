import Foundation

/// Mends the faults of real feeds that libxml2's recovery reads badly, before a recovering
/// parse: what comes before the first `<` (white space before the XML declaration), control
/// characters XML forbids, and a bare `&` (written as `&amp;`, so its text is kept). CDATA
/// sections and comments are left as they are: an `&` there is already text.
enum XMLMending {
    static func mend(_ utf8: Data) -> Data {
        let bytes = [UInt8](utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + bytes.count / 64)
        var at = bytes.firstIndex(of: UInt8(ascii: "<")) ?? bytes.count
        while at < bytes.count {
            let byte = bytes[at]
            switch byte {
            case 0x00...0x08, 0x0B, 0x0C, 0x0E...0x1F:
                at += 1
            case UInt8(ascii: "<"):
                if let end = skipped(bytes, at, opening: "<![CDATA[", closing: "]]>") ?? skipped(bytes, at, opening: "<!--", closing: "-->") {
                    out.append(contentsOf: bytes[at..<end])
                    at = end
                } else {
                    out.append(byte)
                    at += 1
                }
            case UInt8(ascii: "&"):
                out.append(byte)
                if !isReference(bytes, at) { out.append(contentsOf: Array("amp;".utf8)) }
                at += 1
            default:
                out.append(byte)
                at += 1
            }
        }
        return Data(out)
    }

    /// Where a section that starts at `at` with `opening` ends (after `closing`, or at the end).
    private static func skipped(_ bytes: [UInt8], _ at: Int, opening: String, closing: String) -> Int? {
        let open = Array(opening.utf8), close = Array(closing.utf8)
        guard bytes.count - at >= open.count, Array(bytes[at..<(at + open.count)]) == open else { return nil }
        var index = at + open.count
        while index + close.count <= bytes.count {
            if bytes[index] == close[0], Array(bytes[index..<(index + close.count)]) == close { return index + close.count }
            index += 1
        }
        return bytes.count
    }

    /// Whether the `&` at `at` begins a reference: `&name;`, `&#digits;` or `&#xhex;`.
    private static func isReference(_ bytes: [UInt8], _ at: Int) -> Bool {
        var index = at + 1
        guard index < bytes.count else { return false }
        func isNameByte(_ byte: UInt8) -> Bool {
            byte >= 0x80 || (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
        }
        if bytes[index] == UInt8(ascii: "#") {
            index += 1
            let hex = index < bytes.count && (bytes[index] == UInt8(ascii: "x") || bytes[index] == UInt8(ascii: "X"))
            if hex { index += 1 }
            let start = index
            while index < bytes.count, index - start < 10,
                  (0x30...0x39).contains(bytes[index]) || hex && ((0x41...0x46).contains(bytes[index]) || (0x61...0x66).contains(bytes[index])) {
                index += 1
            }
            return index > start && index < bytes.count && bytes[index] == UInt8(ascii: ";")
        }
        let start = index
        guard !(0x30...0x39).contains(bytes[index]), bytes[index] != UInt8(ascii: "-"), bytes[index] != UInt8(ascii: ".") else { return false }
        while index < bytes.count, index - start < 40, isNameByte(bytes[index]) { index += 1 }
        return index > start && index < bytes.count && bytes[index] == UInt8(ascii: ";")
    }
}
