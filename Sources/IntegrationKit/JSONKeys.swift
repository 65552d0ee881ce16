import Foundation

/// The keys of an object that a reader looks for, prepared for matching against a body's
/// bytes (see `JSONReader.readObject(_:_:)`).
public struct JSONKeys<Key: RawRepresentable & CaseIterable & Sendable>: Sendable where Key.RawValue == String {
    @usableFromInline let keys: [Key]
    @usableFromInline let table: JSONKeyTable

    /// Prepares every case of `Key`, by its raw value.
    public init() {
        keys = Array(Key.allCases)
        table = JSONKeyTable(keys.map(\.rawValue))
    }
}

/// Key names by their length in bytes, each with its index.
@usableFromInline
struct JSONKeyTable: Sendable {
    private struct Candidate: Sendable {
        var utf8: [UInt8]
        var index: Int
    }

    private let byLength: [[Candidate]]

    init(_ names: [String]) {
        var byLength: [[Candidate]] = []
        for (index, name) in names.enumerated() {
            let utf8 = Array(name.utf8)
            while byLength.count <= utf8.count { byLength.append([]) }
            byLength[utf8.count].append(Candidate(utf8: utf8, index: index))
        }
        self.byLength = byLength
    }

    func match(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard bytes.count < byLength.count else { return nil }
        guard bytes.count > 0 else { return byLength[0].first?.index }
        for candidate in byLength[bytes.count] where candidate.utf8.withUnsafeBufferPointer({
            memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0
        }) {
            return candidate.index
        }
        return nil
    }

    func match(_ name: String) -> Int? {
        var name = name
        return name.withUTF8 { match($0) }
    }
}
