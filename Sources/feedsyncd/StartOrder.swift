import Core
import Foundation

/// The order in which a daemon first claims its feeds.
///
/// One daemon on its own store takes them as the config lists them. Several daemons sharing a
/// store would, in that order, all claim the same feed at the same moment, and two of the three
/// claims of every feed would be lost (issue 40: 3 claims per feed in a 3-daemon cluster). So on
/// a shared store each daemon takes them in an order of its own: the config's runs of neighbouring
/// feeds, by a hash of something only it has (its instance id). Which feeds the others synced
/// meanwhile it then learns in bulk (``Core/SyncedSinceCheck``), not by a claim each.
struct StartOrder {
    /// `nil`: the config's order.
    let seed: String?

    /// The indices of `count` items in this daemon's order: the same for the same seed. The
    /// config's runs of ``block`` items stay together, in their order (neighbouring feeds often
    /// share a host, whose connections the daemon then reuses); the runs go by a hash of the seed
    /// and the run's first name, so no generator is needed and one run's place does not depend on
    /// the others'. Indices rather than the items, so 100,000 feeds are not copied.
    func order(_ count: Int, name: (Int) -> String) -> [Int] {
        guard let seed else { return Array(0 ..< count) }
        let base = FNV1a.hash(seed.utf8)
        let runs = stride(from: 0, to: count, by: Self.block).map { (Self.mixed(FNV1a.hash(name($0).utf8, from: base)), $0) }
        return runs.sorted { $0.0 < $1.0 }.flatMap { $0.1 ..< min($0.1 + Self.block, count) }
    }

    /// How many neighbouring feeds of the config go together.
    static let block = 256

    /// MurmurHash3's finalizer: every bit of the hash moves every bit of the key, so names that
    /// differ only in their last characters still land far apart.
    static func mixed(_ hash: UInt64) -> UInt64 {
        var h = hash
        h = (h ^ (h >> 33)) &* 0xff51_afd7_ed55_8ccd
        h = (h ^ (h >> 33)) &* 0xc4ce_b9fe_1a85_ec53
        return h ^ (h >> 33)
    }
}
