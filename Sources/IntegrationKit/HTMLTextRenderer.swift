import Foundation

/// The one pass of ``HTMLText/plainText(_:_:)`` over an HTML's UTF-8 bytes, writing the text
/// into a buffer the caller sized (see ``HTMLText``'s bound), then trimming it in place.
struct HTMLTextRenderer {
    private let input: UnsafeBufferPointer<UInt8>
    private let output: UnsafeMutableBufferPointer<UInt8>
    private let collapses: Bool
    private var length = 0

    init(input: UnsafeBufferPointer<UInt8>, output: UnsafeMutableBufferPointer<UInt8>, collapses: Bool) {
        self.input = input
        self.output = output
        self.collapses = collapses
    }

    mutating func render() {
        let count = input.count
        var index = 0
        while index < count {
            let byte = input[index]
            if byte > 0x20 && byte != UInt8(ascii: "<") && byte != UInt8(ascii: "&") {
                // A run of plain text, copied whole.
                var end = index + 1
                while end < count, input[end] > 0x20, input[end] != UInt8(ascii: "<"), input[end] != UInt8(ascii: "&") { end += 1 }
                UnsafeMutableRawPointer(output.baseAddress! + length).copyMemory(from: input.baseAddress! + index, byteCount: end - index)
                length += end - index
                index = end
                continue
            }
            switch byte {
            case UInt8(ascii: "<"):
                if let end = markup(at: index) {
                    index = end
                } else {
                    append(byte)
                    index += 1
                }
            case UInt8(ascii: "&"):
                if let (value, end) = HTMLEntities.reference(in: input, at: index) {
                    text(value.first)
                    if let second = value.second { text(second) }
                    index = end
                } else {
                    append(byte)
                    index += 1
                }
            case 0x0D:
                // CR LF and a lone CR are one LF (the standard's input stream preprocessing).
                space(0x0A)
                index += index + 1 < count && input[index + 1] == 0x0A ? 2 : 1
            case 0x00:
                index += 1
            default:
                space(byte)
                index += 1
            }
        }
    }

    /// Trims the text written (each line, when collapsing; then both ends) and returns its length.
    mutating func finish() -> Int {
        if collapses { trimLines() }
        let (start, end) = trimmed(0, length, HTMLText.isWhiteSpace)
        move(start, end, to: 0)
        length = end - start
        return length
    }

    /// Trims each line of its spaces (``HTMLText/isLineSpace(_:)``) in place: a space left before
    /// a line break by the markup reads as nothing.
    private mutating func trimLines() {
        var written = 0
        var lineStart = 0
        while lineStart <= length {
            let lineEnd = position(of: 0x0A, in: lineStart) ?? length
            let (start, end) = trimmed(lineStart, lineEnd, HTMLText.isLineSpace)
            move(start, end, to: written)
            written += end - start
            if lineEnd < length {
                output[written] = 0x0A
                written += 1
            }
            lineStart = lineEnd + 1
        }
        length = written
    }

    /// The part of `start..<end` of the output without the scalars `isTrimmed` takes at either end.
    private func trimmed(_ start: Int, _ end: Int, _ isTrimmed: (Unicode.Scalar) -> Bool) -> (Int, Int) {
        var start = start
        var end = end
        while start < end, let (scalar, size) = scalar(at: start, before: end), isTrimmed(scalar) { start += size }
        while end > start {
            var first = end - 1
            while first > start, output[first] & 0xC0 == 0x80 { first -= 1 }
            guard let (scalar, _) = scalar(at: first, before: end), isTrimmed(scalar) else { break }
            end = first
        }
        return (start, end)
    }

    /// The scalar whose UTF-8 starts at `index` of the output, and its length.
    private func scalar(at index: Int, before end: Int) -> (Unicode.Scalar, Int)? {
        var iterator = UnsafeBufferPointer(rebasing: output[index..<min(end, index + 4)]).makeIterator()
        var decoder = UTF8()
        guard case .scalarValue(let scalar) = decoder.decode(&iterator) else { return nil }
        return (scalar, UTF8.width(scalar))
    }

    /// Moves the output's bytes `start..<end` to `destination` (never after `start`).
    private func move(_ start: Int, _ end: Int, to destination: Int) {
        guard start != destination, end > start else { return }
        memmove(output.baseAddress! + destination, output.baseAddress! + start, end - start)
    }

    private func position(of byte: UInt8, in start: Int) -> Int? {
        guard start < length, let found = memchr(output.baseAddress! + start, Int32(byte), length - start) else { return nil }
        return output.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    // MARK: Writing

    private mutating func append(_ byte: UInt8) {
        output[length] = byte
        length += 1
    }

    /// A scalar a reference stands for: text, or white space to collapse like any other.
    private mutating func text(_ scalar: Unicode.Scalar) {
        if scalar.value <= 0x20 {
            space(UInt8(scalar.value))
            return
        }
        for unit in UTF8.encode(scalar)! { append(unit) }
    }

    /// A byte up to 0x20: ASCII white space collapses when collapsing; other controls are text.
    private mutating func space(_ byte: UInt8) {
        guard collapses else { return append(byte) }
        switch byte {
        case 0x09, 0x0A, 0x0C, 0x0D, 0x20:
            if length > 0, output[length - 1] != 0x20, output[length - 1] != 0x0A { append(0x20) }
        default:
            append(byte)
        }
    }

    /// Ends a block with a blank line, unless the text already ends with one.
    private mutating func breakBlock() {
        if length >= 2 && output[length - 1] == 0x0A && output[length - 2] == 0x0A { return }
        if length == 0 || output[length - 1] != 0x0A { append(0x0A) }
        append(0x0A)
    }

    // MARK: Markup

    /// Reads the markup that starts at the `<` at `start` and writes what it stands for; the
    /// index after it, or `nil` when this `<` is text.
    private mutating func markup(at start: Int) -> Int? {
        let count = input.count
        guard start + 1 < count else { return nil }
        let next = input[start + 1]
        if Self.isLetter(next) { return tag(nameAt: start + 1, isEnd: false) }
        switch next {
        case UInt8(ascii: "/"):
            guard start + 2 < count else { return nil }
            let after = input[start + 2]
            if Self.isLetter(after) { return tag(nameAt: start + 2, isEnd: true) }
            return after == UInt8(ascii: ">") ? start + 3 : afterByte(UInt8(ascii: ">"), from: start + 2)
        case UInt8(ascii: "!"):
            if start + 3 < count, input[start + 2] == UInt8(ascii: "-"), input[start + 3] == UInt8(ascii: "-") {
                return endOfComment(from: start + 4)
            }
            return afterByte(UInt8(ascii: ">"), from: start + 2)
        case UInt8(ascii: "?"):
            return afterByte(UInt8(ascii: ">"), from: start + 2)
        default:
            return nil
        }
    }

    /// Reads a tag whose name starts at `nameStart`, acts on it, and returns the index after it.
    private mutating func tag(nameAt nameStart: Int, isEnd: Bool) -> Int {
        let count = input.count
        var nameEnd = nameStart
        while nameEnd < count, !Self.endsName(input[nameEnd]) { nameEnd += 1 }
        // Attributes, to the first `>` outside a quoted value.
        var index = nameEnd
        while index < count, input[index] != UInt8(ascii: ">") {
            if input[index] == UInt8(ascii: "=") {
                index += 1
                while index < count, Self.isSpace(input[index]) { index += 1 }
                if index < count, input[index] == UInt8(ascii: "\"") || input[index] == UInt8(ascii: "'") {
                    index = afterByte(input[index], from: index + 1)
                    continue
                }
                continue
            }
            index += 1
        }
        // A tag the text ends inside is no tag at all.
        guard index < count else { return count }
        let end = index + 1
        let name = UnsafeBufferPointer(rebasing: input[nameStart..<nameEnd])
        if Self.matches(name, "br") {
            append(0x0A)
        } else if Self.isBlock(name) {
            breakBlock()
            if !isEnd && Self.matches(name, "li") { for byte in "• ".utf8 { append(byte) } }
        } else if isEnd {
            return end
        } else if Self.matches(name, "script") {
            return endOfRawText("script", from: end)
        } else if Self.matches(name, "style") {
            return endOfRawText("style", from: end)
        }
        return end
    }

    /// The index after the end tag `</name` (followed by white space, `/` or `>`) that ends a
    /// raw text element's contents; the end of the text when none comes.
    private func endOfRawText(_ name: StaticString, from start: Int) -> Int {
        let count = input.count
        let length = name.utf8CodeUnitCount
        var index = start
        while let open = position(of: UInt8(ascii: "<"), from: index) {
            let nameStart = open + 2
            if nameStart + length < count, input[open + 1] == UInt8(ascii: "/"),
               Self.matches(UnsafeBufferPointer(rebasing: input[nameStart..<(nameStart + length)]), name),
               Self.endsName(input[nameStart + length]) {
                return afterByte(UInt8(ascii: ">"), from: nameStart + length)
            }
            index = open + 1
        }
        return count
    }

    /// The index after a comment whose text starts at `start`: at `-->` or `--!>`, or right
    /// away for `<!-->` and `<!--->`; the end of the text when it is never closed.
    private func endOfComment(from start: Int) -> Int {
        let count = input.count
        if start < count, input[start] == UInt8(ascii: ">") { return start + 1 }
        if start + 1 < count, input[start] == UInt8(ascii: "-"), input[start + 1] == UInt8(ascii: ">") { return start + 2 }
        var index = start
        while let dash = position(of: UInt8(ascii: "-"), from: index) {
            if dash + 2 < count, input[dash + 1] == UInt8(ascii: "-") {
                if input[dash + 2] == UInt8(ascii: ">") { return dash + 3 }
                if dash + 3 < count, input[dash + 2] == UInt8(ascii: "!"), input[dash + 3] == UInt8(ascii: ">") { return dash + 4 }
            }
            index = dash + 1
        }
        return count
    }

    /// The index after the first `byte` from `start`; the end of the text when none comes.
    private func afterByte(_ byte: UInt8, from start: Int) -> Int {
        position(of: byte, from: start).map { $0 + 1 } ?? input.count
    }

    private func position(of byte: UInt8, from start: Int) -> Int? {
        guard start < input.count else { return nil }
        guard let found = memchr(input.baseAddress! + start, Int32(byte), input.count - start) else { return nil }
        return input.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    // MARK: Names

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") }

    /// HTML's ASCII white space: tab, LF, FF, CR, space.
    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0C || byte == 0x0D
    }

    /// What ends a tag's name: white space, `/` or `>`.
    private static func endsName(_ byte: UInt8) -> Bool {
        isSpace(byte) || byte == UInt8(ascii: "/") || byte == UInt8(ascii: ">")
    }

    /// Whether `name` is `lowercase` (ASCII letters and digits), in any case.
    private static func matches(_ name: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        let count = lowercase.utf8CodeUnitCount
        guard name.count == count else { return false }
        for index in 0..<count where (isLetter(name[index]) ? name[index] | 0x20 : name[index]) != lowercase.utf8Start[index] { return false }
        return true
    }

    /// Whether `name` is a block whose start and end make a blank line.
    private static func isBlock(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        switch name.count {
        case 1: return matches(name, "p")
        case 2:
            if matches(name, "li") || matches(name, "tr") || matches(name, "ul") || matches(name, "ol") || matches(name, "hr") { return true }
            return (name[0] == UInt8(ascii: "h") || name[0] == UInt8(ascii: "H")) && (UInt8(ascii: "1")...UInt8(ascii: "6")).contains(name[1])
        case 3: return matches(name, "div") || matches(name, "pre")
        case 10: return matches(name, "blockquote")
        default: return false
        }
    }
}
