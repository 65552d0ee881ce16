import StoreKit

/// Values for many rows in two flat arrays, their text kept as UTF-8 in one growing buffer.
///
/// A page commit binds hundreds of rows of up to 17 values each. Building a `[SQLValue]`
/// per row and letting SQLite copy every string cost about as much as SQLite's own inserts
/// (`perf record`, Benchmarks/README.md). Here rows are laid out flat, and SQLite reads the
/// text in place while the buffer is pinned (``withPinned(_:)``).
struct RowBuffer: ColumnWriter {
    enum Value {
        case text(offset: Int, count: Int)
        case integer(Int64)
        case null
    }

    private(set) var bytes: [UInt8] = []
    private(set) var values: [Value] = []

    init(reservingValues values: Int = 0, bytes: Int = 0) {
        self.values.reserveCapacity(values)
        self.bytes.reserveCapacity(bytes)
    }

    /// Where the next value goes: a row is the values appended from here on.
    var end: Int { values.count }

    mutating func append(_ text: String) {
        let offset = bytes.count
        bytes.append(contentsOf: text.utf8)
        values.append(.text(offset: offset, count: bytes.count - offset))
    }

    /// Appends text given as UTF-8 bytes (from an SQLite column, say) without making a `String`.
    mutating func append(utf8 text: UnsafeBufferPointer<UInt8>) {
        let offset = bytes.count
        bytes.append(contentsOf: text)
        values.append(.text(offset: offset, count: text.count))
    }

    /// Appends a copy of the value at `index` of `rows` (another buffer, pinned).
    mutating func append(_ index: Int, of rows: PinnedRows) {
        switch rows.values[index] {
        case .text(let offset, let count): append(utf8: UnsafeBufferPointer(rebasing: rows.bytes[offset ..< offset + count]))
        case .integer(let value): values.append(.integer(value))
        case .null: values.append(.null)
        }
    }

    mutating func append(_ text: String?) {
        if let text { append(text) } else { values.append(.null) }
    }

    mutating func append(_ integer: Int64?) {
        values.append(integer.map(Value.integer) ?? .null)
    }

    mutating func text(_ value: String?) { append(value) }

    mutating func integer(_ value: Int64?) { append(value) }

    /// Runs `body` with the buffer's memory fixed in place, so statements may bind text
    /// without copying it. No binding made from the ``PinnedRows`` may outlive `body`.
    func withPinned<T>(_ body: (PinnedRows) throws -> T) rethrows -> T {
        try bytes.withUnsafeBufferPointer { bytes in
            try values.withUnsafeBufferPointer { values in
                try body(PinnedRows(bytes: bytes, values: values))
            }
        }
    }
}

/// A ``RowBuffer`` whose memory stays put for the duration of ``RowBuffer/withPinned(_:)``.
struct PinnedRows {
    let bytes: UnsafeBufferPointer<UInt8>
    let values: UnsafeBufferPointer<RowBuffer.Value>
}
