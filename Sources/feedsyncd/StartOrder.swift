import Foundation

/// The order in which a daemon first claims its feeds.
///
/// One daemon on its own store takes them as the config lists them. Several daemons sharing a
/// store would, in that order, all claim the same feed at the same moment, and two of the three
/// claims of every feed would be lost (issue 40: 3 claims per feed in a 3-daemon cluster). So on
/// a shared store each daemon takes them in an order of its own: the config's, shuffled by a
/// generator seeded from something only it has (its instance id). Which feeds the others synced
/// meanwhile it then learns in bulk (``Core/SyncedSinceCheck``), not by a claim each.
struct StartOrder {
    /// `nil`: the config's order.
    let seed: String?

    /// `items` in this daemon's order: the same for the same seed.
    func arrange<Item>(_ items: [Item]) -> [Item] {
        guard let seed else { return items }
        var generator = SplitMix64(seed: Self.fnv1a(seed))
        return items.shuffled(using: &generator)
    }

    /// FNV-1a over the seed's bytes: unlike `Hasher`, the same in every process.
    static func fnv1a(_ text: String) -> UInt64 {
        text.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }
}

/// SplitMix64: a small generator whose sequence is fixed by its seed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
