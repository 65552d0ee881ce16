import StoreKit

/// A result with its column names, so the shared codec reads its rows by name.
struct PostgresTable {
    var columns: [String]
    var rows: [[String?]]

    var layout: ColumnLayout { ColumnLayout(columns) }
}

/// One row of a result, every value as the server's text.
struct PostgresRow: ResultRow {
    var values: [String?]

    init(_ values: [String?]) { self.values = values }

    func text(_ column: Int) -> String? { values[column] }
    func integer(_ column: Int) -> Int64? { values[column].flatMap { Int64($0) } }
    func real(_ column: Int) -> Double? { values[column].flatMap { Double($0) } }
}

/// Rows of a `COPY … FROM STDIN (FORMAT binary)`: each field its length and the bytes of its
/// type's binary form, so the server parses nothing (in the text format it unescaped every field
/// and read every number and search vector from text, 8% of its time in a cold sync).
struct CopyRows: ColumnWriter {
    private(set) var bytes: [UInt8] = []
    /// Where the row being written begins (its field count), or `nil` between rows.
    private var row: Int?
    private var fields: UInt16 = 0

    /// - Parameter headed: whether the rows begin with COPY's header (rows written to be copied
    ///   into another's, ``PostgresDirectRows``, do not).
    init(reserving capacity: Int, headed: Bool = true) {
        bytes.reserveCapacity(capacity + 21)
        if headed { bytes.append(contentsOf: Self.header) }
    }

    /// The signature `PGCOPY\n\377\r\n\0`, no flags and no header extension.
    static let header: [UInt8] = [0x50, 0x47, 0x43, 0x4F, 0x50, 0x59, 0x0A, 0xFF, 0x0D, 0x0A, 0x00, 0, 0, 0, 0, 0, 0, 0, 0]

    private mutating func field() {
        if row == nil {
            row = bytes.count
            bytes.append(contentsOf: [0, 0])
        }
        fields += 1
    }

    private mutating func null() { bytes.append(contentsOf: [0xFF, 0xFF, 0xFF, 0xFF]) }

    /// A field of `length` bytes, written by `body` after its length.
    private mutating func sized(_ body: (inout [UInt8]) -> Void) {
        let start = bytes.count
        bytes.append(contentsOf: [0, 0, 0, 0])
        body(&bytes)
        put(UInt32(bytes.count - start - 4), at: start)
    }

    private mutating func put(_ value: UInt32, at offset: Int) {
        withUnsafeBytes(of: value.bigEndian) { bytes.replaceSubrange(offset ..< offset + 4, with: $0) }
    }

    mutating func text(_ value: String?) {
        field()
        guard var value else { return null() }
        sized { bytes in
            value.withUTF8 { utf8 in
                // PostgreSQL's text holds no NUL: each becomes U+FFFD, the stretches between go in whole.
                var from = 0
                for index in utf8.indices where utf8[index] == 0 {
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[from ..< index]))
                    bytes.append(contentsOf: [0xEF, 0xBF, 0xBD])
                    from = index + 1
                }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[from...]))
            }
        }
    }

    /// A `bigint`.
    mutating func integer(_ value: Int64?) {
        field()
        guard let value else { return null() }
        bytes.append(contentsOf: [0, 0, 0, 8])
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// A `tsvector`: the words of `fields` as ``PostgresSearchWords`` makes them, or NULL where
    /// it does not vouch for them (or `fields` is `nil`).
    /// - Returns: how many words the vector numbers (its last position), `nil` for NULL.
    mutating func searchWords(_ fields: (String?, String?, String?)?) -> Int? {
        field()
        guard let fields else { null(); return nil }
        let start = bytes.count
        var vector = BinaryVector()
        swap(&vector.bytes, &bytes)
        vector.bytes.append(contentsOf: [0, 0, 0, 0, 0, 0, 0, 0])   // its length, then its count of words
        let made = PostgresSearchWords.write(fields.0, fields.1, fields.2, to: &vector)
        swap(&vector.bytes, &bytes)
        guard made else {
            bytes.removeSubrange(start...)
            null()
            return nil
        }
        put(UInt32(bytes.count - start - 4), at: start)
        put(UInt32(vector.entries), at: start + 4)
        return vector.words
    }

    /// `count` fields already in COPY's binary form.
    mutating func encodedFields(_ encoded: ArraySlice<UInt8>, count: Int) {
        field()
        fields += UInt16(count - 1)
        bytes.append(contentsOf: encoded)
    }

    /// A `tsvector` of a post's own words, as ``searchWords(_:)`` wrote them (`post`, the field
    /// with its length), and then its author's, numbered on after the post's `words` as
    /// `tsvector`'s `||` numbers them.
    /// - Returns: `false`, with nothing written, when a word would stand at more positions than
    ///   a vector keeps, or at a position past the last: `||` drops those, and only the server's
    ///   own `||` is sure to drop the same ones.
    mutating func searchWords(post: ArraySlice<UInt8>, words: Int, author: [AuthorWords.Entry]) -> Bool {
        guard words + (author.lazy.flatMap(\.positions).max() ?? 0) < 16_383,
              author.allSatisfy({ $0.positions.count + Self.positions(of: $0.word, in: post) < 256 }) else { return false }
        field()
        let start = bytes.count
        bytes.append(contentsOf: [0, 0, 0, 0, 0, 0, 0, 0])
        var entries = 0
        post.withUnsafeBufferPointer { post in
            var postEntries = BinaryVectorEntries(post)
            var current = postEntries.next()
            var next = 0
            func append16(_ value: Int) {
                bytes.append(UInt8(truncatingIfNeeded: value >> 8))
                bytes.append(UInt8(truncatingIfNeeded: value))
            }
            func appendAuthor(_ entry: AuthorWords.Entry) {
                for position in entry.positions { append16(position + words) }
            }
            while current != nil || next < author.count {
                let order = current.map { next < author.count ? AuthorWords.compare(UnsafeBufferPointer(rebasing: post[$0.word]), author[next].word) : -1 } ?? 1
                if order <= 0, let entry = current {
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: post[entry.word]))
                    bytes.append(0)
                    append16(entry.count + (order == 0 ? author[next].positions.count : 0))
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: post[entry.positions]))
                    if order == 0 {
                        appendAuthor(author[next])
                        next += 1
                    }
                    current = postEntries.next()
                } else {
                    bytes.append(contentsOf: author[next].word)
                    bytes.append(0)
                    append16(author[next].positions.count)
                    appendAuthor(author[next])
                    next += 1
                }
                entries += 1
            }
        }
        put(UInt32(bytes.count - start - 4), at: start)
        put(UInt32(entries), at: start + 4)
        return true
    }

    /// How many positions `word` has in `vector` (a binary `tsvector` field), 0 when it is not there.
    private static func positions(of word: [UInt8], in vector: ArraySlice<UInt8>) -> Int {
        vector.withUnsafeBufferPointer { vector in
            var entries = BinaryVectorEntries(vector)
            while let entry = entries.next() {
                if AuthorWords.compare(UnsafeBufferPointer(rebasing: vector[entry.word]), word) == 0 { return entry.count }
            }
            return 0
        }
    }

    /// Ends the row the fields since the last one make.
    mutating func endRow() {
        if let row {
            withUnsafeBytes(of: fields.bigEndian) { bytes.replaceSubrange(row ..< row + 2, with: $0) }
        }
        row = nil
        fields = 0
    }

    /// The rows with COPY's trailer.
    mutating func finish() -> [UInt8] {
        bytes.append(contentsOf: [0xFF, 0xFF])
        return bytes
    }
}

/// A `tsvector`'s entries in its binary form: each word, NUL, its count of positions and the
/// positions, two bytes each (weight D, the server's default).
private struct BinaryVector: VectorEntries {
    var bytes: [UInt8] = []
    var entries = 0
    /// Positions written: the text's count of words.
    var words = 0

    mutating func entry(_ word: UnsafeBufferPointer<UInt8>, positions: some Collection<Int>) {
        bytes.append(contentsOf: word)
        bytes.append(0)
        append(UInt16(positions.count))
        for position in positions { append(UInt16(position)) }
        entries += 1
        words += positions.count
    }

    private mutating func append(_ value: UInt16) {
        bytes.append(UInt8(value >> 8))
        bytes.append(UInt8(value & 0xFF))
    }
}

/// The entries of a binary `tsvector` field (its length, its count of entries, then the entries
/// ``BinaryVector`` writes), in order; it stops at the first that does not fit in the field.
private struct BinaryVectorEntries {
    private let field: UnsafeBufferPointer<UInt8>
    private var at = 8

    init(_ field: UnsafeBufferPointer<UInt8>) { self.field = field }

    /// The next entry: where its word is, how many positions it has, and where they are.
    mutating func next() -> (word: Range<Int>, count: Int, positions: Range<Int>)? {
        guard let nul = field[at...].firstIndex(of: 0), nul + 2 < field.count else { return nil }
        let count = Int(field[nul + 1]) << 8 | Int(field[nul + 2])
        let positions = nul + 3 ..< nul + 3 + 2 * count
        guard positions.upperBound <= field.count else { return nil }
        defer { at = positions.upperBound }
        return (at ..< nul, count, positions)
    }
}

/// An author's words (handle and name) as ``PostgresSearchWords`` makes them, in the server's
/// order, to number on after a post's own (``CopyRows/searchWords(post:words:author:)``).
struct AuthorWords: VectorEntries {
    struct Entry {
        var word: [UInt8]
        var positions: [Int]
    }

    private(set) var entries: [Entry] = []

    /// The words of `handle` and `name`; `nil` when ``PostgresSearchWords`` does not vouch for them.
    init?(handle: String?, name: String?) {
        guard PostgresSearchWords.write(handle, name, to: &self) else { return nil }
    }

    mutating func entry(_ word: UnsafeBufferPointer<UInt8>, positions: some Collection<Int>) {
        entries.append(Entry(word: Array(word), positions: Array(positions)))
    }

    /// The server's order of two words: bytewise, then the shorter first.
    static func compare(_ left: UnsafeBufferPointer<UInt8>, _ right: [UInt8]) -> Int {
        for (a, b) in zip(left, right) where a != b { return a < b ? -1 : 1 }
        return left.count - right.count
    }
}
