import Foundation

/// The scanner: white space, punctuation, literals and numbers, checked against RFC 8259's grammar.
extension JSONReader {
    mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    mutating func expect(_ byte: UInt8) throws {
        guard try peek() == byte else {
            throw SyntaxError(offset: offset, reason: "expected '\(Character(Unicode.Scalar(byte)))'")
        }
        offset += 1
    }

    mutating func consumeIf(_ byte: UInt8) throws -> Bool {
        guard try peek() == byte else { return false }
        offset += 1
        return true
    }

    mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard offset + count <= bytes.count,
              memcmp(bytes.baseAddress! + offset, word.utf8Start, count) == 0
        else { throw SyntaxError(offset: offset, reason: "expected \(word)") }
        offset += count
    }

    /// The text of a number, checked against JSON's grammar.
    mutating func readNumberSyntax() throws -> Substring {
        skipWhitespace()
        let start = offset
        func digits() -> Int {
            let from = offset
            while offset < bytes.count, (0x30...0x39).contains(bytes[offset]) { offset += 1 }
            return offset - from
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        let integerStart = offset
        let integerDigits = digits()
        guard integerDigits > 0 else { throw SyntaxError(offset: start, reason: "expected a value") }
        // `int = zero / ( digit1-9 *DIGIT )`: `012` and `-01` are not numbers (RFC 8259 §6).
        guard integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else {
            throw SyntaxError(offset: integerStart, reason: "a number has a leading zero")
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            offset += 1
            guard digits() > 0 else { throw SyntaxError(offset: offset, reason: "a number has no digits after '.'") }
        }
        if offset < bytes.count, bytes[offset] | 0x20 == UInt8(ascii: "e") {
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            guard digits() > 0 else { throw SyntaxError(offset: offset, reason: "a number has no exponent digits") }
        }
        return Substring(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
    }
}
