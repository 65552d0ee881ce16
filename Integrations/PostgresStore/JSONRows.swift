import Core
import StoreKit

/// A small page's posts as one `jsonb` parameter: an array of rows, each an array of the values in
/// ``PostColumns/columns`` order (`null` for NULL), NUL written as U+FFFD as ``CopyRows`` does.
struct JSONRows: ColumnWriter {
    private var json: JSONWriter
    private(set) var count = 0

    init(reserving capacity: Int) {
        json = JSONWriter(escaping: .replacingNUL, reserving: capacity)
        json.openArray()
    }

    mutating func text(_ value: String?) {
        if let value { json.string(value) } else { json.raw(Self.null) }
    }

    mutating func integer(_ value: Int64?) {
        if let value { json.int(value) } else { json.raw(Self.null) }
    }

    /// Starts a row; ``endRow()`` ends it.
    mutating func beginRow() { json.openArray() }

    mutating func endRow() {
        json.closeArray()
        count += 1
    }

    /// The rows written, as JSON text.
    mutating func finish() -> String {
        json.closeArray()
        return json.text
    }

    private static let null = Array("null".utf8)
}
