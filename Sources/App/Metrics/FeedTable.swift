/// Each feed's numbers for ``MetricsRegistry``, found by name: the numbers in one array and a
/// dictionary of positions into it. A dictionary of the numbers themselves keeps a bucket's
/// worth of them for every bucket, used or not: by their sizes, 262,144 buckets of 192 bytes
/// (50 MB) for 100,000 feeds, where this keeps 100,000 numbers and 262,144 buckets of 24 bytes
/// (about 26 MB; issue 40).
struct FeedTable<Numbers> {
    private var positions: [String: Int] = [:]
    private var names: [String] = []
    private var numbers: [Numbers] = []

    /// The feeds held, in no particular order.
    var feeds: [String] { names }

    mutating func reserveCapacity(_ count: Int) {
        positions.reserveCapacity(count)
        names.reserveCapacity(count)
        numbers.reserveCapacity(count)
    }

    /// A feed's numbers; setting `nil` drops them (the last feed's take their place).
    subscript(name: String) -> Numbers? {
        get { positions[name].map { numbers[$0] } }
        set {
            switch (positions[name], newValue) {
            case let (index?, value?):
                numbers[index] = value
            case let (nil, value?):
                positions[name] = numbers.count
                names.append(name)
                numbers.append(value)
            case let (index?, nil):
                let last = numbers.count - 1
                if index != last {
                    names.swapAt(index, last)
                    numbers.swapAt(index, last)
                    positions[names[index]] = index
                }
                names.removeLast()
                numbers.removeLast()
                positions[name] = nil
            case (nil, nil):
                break
            }
        }
    }
}
