import Foundation

extension HTMLEntities {
    /// ``namedTable`` read once into sorted names, searched by their bytes: a lookup builds no
    /// string and allocates nothing.
    struct NamedTable: Sendable {
        /// Every name's bytes, one after the other, in sorted order.
        private let names: [UInt8]
        /// Where each name ends in ``names``; it starts where the one before ends.
        private let ends: [Int]
        private let values: [Value]

        static let shared = NamedTable(HTMLEntities.namedTable)

        init(_ table: String) {
            var names: [UInt8] = []
            var ends: [Int] = []
            var values: [Value] = []
            for entry in table.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
                let parts = entry.split(separator: "=", maxSplits: 1)
                let scalars = parts[1].split(separator: "+").map { Unicode.Scalar(UInt32($0, radix: 16)!)! }
                names.append(contentsOf: parts[0].utf8)
                ends.append(names.count)
                values.append(Value(first: scalars[0], second: scalars.count > 1 ? scalars[1] : nil))
            }
            self.names = names
            self.ends = ends
            self.values = values
        }

        /// How many names the table holds.
        var count: Int { values.count }

        /// The value of the name whose bytes are exactly `name` (`amp;`, `amp`).
        func value(_ name: UnsafeBufferPointer<UInt8>) -> Value? {
            var low = 0
            var high = values.count
            while low < high {
                let middle = (low + high) / 2
                let order = compare(middle, name)
                if order == 0 { return values[middle] }
                if order < 0 { low = middle + 1 } else { high = middle }
            }
            return nil
        }

        /// Every name with its value, in order.
        var entries: [(name: String, value: Value)] {
            values.indices.map { index in
                (String(decoding: names[(index == 0 ? 0 : ends[index - 1])..<ends[index]], as: UTF8.self), values[index])
            }
        }

        /// The order of the name at `index` against `name`, byte by byte (a prefix first).
        private func compare(_ index: Int, _ name: UnsafeBufferPointer<UInt8>) -> Int {
            let start = index == 0 ? 0 : ends[index - 1]
            let length = ends[index] - start
            let common = min(length, name.count)
            let order = names.withUnsafeBufferPointer { memcmp($0.baseAddress! + start, name.baseAddress!, common) }
            return order != 0 ? Int(order) : length - name.count
        }
    }
}
