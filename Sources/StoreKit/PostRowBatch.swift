import Core
import Foundation

/// One page of stored posts as the store read them: each row's columns of
/// ``StoredPostColumns/select`` copied as they came (text as its UTF-8 bytes, whole numbers as
/// numbers), and each post's resolved videos.
///
/// The store's thread only steps the query and copies bytes into one buffer; making posts of
/// them, or writing them straight out (`export`), happens on another thread. A batch is a
/// value, so it crosses threads as it is.
///
/// ```swift
/// let batch = try await reader.postRows(matching: query)
/// var columns = try StoredPostColumns(batch.layout)
/// let stored = batch.storedPost(0, reading: &columns)   // the same post `posts(matching:)` gives
/// ```
public struct PostRowBatch: Sendable {
    /// The column names, in the order each row holds them.
    public let names: [String]
    /// Where each named column is.
    public let layout: ColumnLayout
    /// Every text cell's bytes, one after another.
    private var bytes: [UInt8] = []
    /// Per cell: the start of its bytes (text) or its value (a whole number, a real's bit pattern).
    private var values: [Int64] = []
    /// Per cell: its byte count (text), or ``null``, ``integer`` or ``real``.
    private var lengths: [Int32] = []
    /// Each row's resolved videos, in the order of its video ids.
    public private(set) var videos: [[Video]] = []

    private static let null: Int32 = -1, integer: Int32 = -2, real: Int32 = -3

    /// An empty batch of rows with these columns.
    public init(names: [String], reservingRows rows: Int = 0) {
        self.names = names
        layout = ColumnLayout(names)
        // A post's columns take a few hundred bytes: one buffer a page, grown rarely.
        bytes.reserveCapacity(rows * 512)
        values.reserveCapacity(rows * names.count)
        lengths.reserveCapacity(rows * names.count)
        videos.reserveCapacity(rows)
    }

    /// How many rows the batch holds.
    public var count: Int { videos.count }

    // MARK: Filling (the store)

    /// Appends a text cell (`nil` for NULL), copying its bytes.
    public mutating func appendText(_ text: UnsafeBufferPointer<UInt8>?) {
        guard let text else { return appendNull() }
        values.append(Int64(bytes.count))
        lengths.append(Int32(text.count))
        bytes.append(contentsOf: text)
    }

    /// Appends a whole-number cell.
    public mutating func appendInteger(_ value: Int64?) {
        guard let value else { return appendNull() }
        values.append(value)
        lengths.append(Self.integer)
    }

    /// Appends a real cell.
    public mutating func appendReal(_ value: Double?) {
        guard let value else { return appendNull() }
        values.append(Int64(bitPattern: value.bitPattern))
        lengths.append(Self.real)
    }

    /// Appends a NULL cell.
    public mutating func appendNull() {
        values.append(0)
        lengths.append(Self.null)
    }

    /// Ends a row (all of its cells appended) with its resolved videos.
    public mutating func endRow(videos rowVideos: [Video]) {
        videos.append(rowVideos)
    }

    // MARK: Reading

    /// The bytes of a text cell, or `nil` when it is NULL or not text.
    public func withText<Result>(_ row: Int, _ column: Int, _ body: (UnsafeBufferPointer<UInt8>?) -> Result) -> Result {
        let cell = row * names.count + column
        let length = lengths[cell]
        guard length >= 0 else { return body(nil) }
        return bytes.withUnsafeBufferPointer { all in
            body(UnsafeBufferPointer(rebasing: all[Int(values[cell])..<Int(values[cell]) + Int(length)]))
        }
    }

    /// Whether a cell is NULL.
    public func isNull(_ row: Int, _ column: Int) -> Bool { lengths[row * names.count + column] == Self.null }

    /// Where the export's order stands after the last row: its time and id.
    public var lastPosition: StoredPost.Position? {
        guard count > 0, let time = try? layout.position(of: "created_at"), let id = try? layout.position(of: "id") else { return nil }
        let last = row(count - 1)
        return StoredPost.Position(createdAt: StoredTime.date(last.integer(time) ?? 0), id: PostID(last.text(id) ?? ""))
    }

    /// A row, read as a query's row is read (``ResultRow``).
    public func row(_ index: Int) -> Row { Row(batch: self, index: index) }

    /// The stored post of a row with its videos, as ``StoredPostColumns/storedPost(_:)`` makes it
    /// from the query's row.
    public func storedPost(_ index: Int, reading columns: inout StoredPostColumns) -> StoredPost {
        var stored = columns.storedPost(row(index))
        stored.videos = videos[index]
        return stored
    }

    /// A row of a batch, whose cells read as the query's did: text as it was stored (a NUL
    /// inside it does not end it), numbers as numbers.
    public struct Row: ResultRow {
        let batch: PostRowBatch
        /// Which row of the batch this is.
        public let index: Int

        public func text(_ column: Int) -> String? {
            let cell = index * batch.names.count + column
            switch batch.lengths[cell] {
            case PostRowBatch.null: return nil
            case PostRowBatch.integer: return String(batch.values[cell])
            case PostRowBatch.real: return String(Double(bitPattern: UInt64(bitPattern: batch.values[cell])))
            default: return batch.withText(index, column) { String(decoding: $0!, as: UTF8.self) }
            }
        }

        public func integer(_ column: Int) -> Int64? {
            let cell = index * batch.names.count + column
            switch batch.lengths[cell] {
            case PostRowBatch.null: return nil
            case PostRowBatch.integer: return batch.values[cell]
            case PostRowBatch.real: return Int64(exactly: Double(bitPattern: UInt64(bitPattern: batch.values[cell])).rounded(.towardZero))
            default: return text(column).flatMap { Int64($0) } ?? 0
            }
        }

        public func real(_ column: Int) -> Double? {
            let cell = index * batch.names.count + column
            switch batch.lengths[cell] {
            case PostRowBatch.null: return nil
            case PostRowBatch.integer: return Double(batch.values[cell])
            case PostRowBatch.real: return Double(bitPattern: UInt64(bitPattern: batch.values[cell]))
            default: return text(column).flatMap { Double($0) } ?? 0
            }
        }
    }
}

/// A store that reads a page of posts as raw rows (``PostRowBatch``), leaving the making of
/// posts to the caller's thread: `export` reads the next page while it writes this one.
public protocol PostRowReader: Sendable {
    /// The page `query` names (a ``PostQuery/stable`` query: one feed, newest first), as rows.
    func postRows(matching query: PostQuery) async throws -> PostRowBatch
}
