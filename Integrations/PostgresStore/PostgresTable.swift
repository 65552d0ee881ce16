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

/// Lines of a `COPY … FROM STDIN`, in COPY's text format: fields split by tabs, `\N` for
/// NULL, and backslash, tab, newline and carriage return escaped.
struct CopyLines: ColumnWriter {
    private(set) var bytes: [UInt8] = []
    private(set) var count = 0
    private var first = true

    init(reserving capacity: Int) { bytes.reserveCapacity(capacity) }

    private mutating func separate() {
        if !first { bytes.append(0x09) }
        first = false
    }

    mutating func text(_ value: String?) {
        separate()
        guard var value else { bytes.append(contentsOf: [0x5C, 0x4E]); return }   // \N
        value.withUTF8 { utf8 in
            // The stretches between bytes to escape go in whole.
            var from = 0
            for index in utf8.indices {
                let escaped: [UInt8]
                switch utf8[index] {
                case 0x5C: escaped = [0x5C, 0x5C]
                case 0x09: escaped = [0x5C, 0x74]
                case 0x0A: escaped = [0x5C, 0x6E]
                case 0x0D: escaped = [0x5C, 0x72]
                case 0x00: escaped = [0xEF, 0xBF, 0xBD]   // PostgreSQL text holds no NUL: U+FFFD
                default: continue
                }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[from ..< index]))
                bytes.append(contentsOf: escaped)
                from = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[from...]))
        }
    }

    mutating func integer(_ value: Int64?) {
        separate()
        guard let value else { bytes.append(contentsOf: [0x5C, 0x4E]); return }
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Ends the line the values since the last one make.
    mutating func endLine() {
        bytes.append(0x0A)
        first = true
        count += 1
    }
}
