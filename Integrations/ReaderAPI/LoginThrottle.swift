import Foundation

/// Slows failed logins per client address and per account name: after the n-th failure in a
/// row, the next answer to either waits ``delay(afterFailures:)`` first (0.5 s, doubling, at
/// most 8 s). A success clears the name's count and the address's. At most ``capacity``
/// addresses and names are remembered; past that the oldest are forgotten.
actor LoginThrottle {
    static let capacity = 10_000

    private var failures: [String: (count: Int, serial: Int)] = [:]
    private var serial = 0

    /// How long an answer waits after `count` failures in a row.
    static func delay(afterFailures count: Int) -> Duration {
        guard count > 0 else { return .zero }
        return .milliseconds(500 * (1 << min(count - 1, 4)))
    }

    /// The wait owed before answering a login for `name` from `address`.
    func delay(address: String, name: String) -> Duration {
        Self.delay(afterFailures: max(failures["a:" + address]?.count ?? 0, failures["n:" + name]?.count ?? 0))
    }

    /// Records a failed login; returns how long its answer waits.
    func failed(address: String, name: String) -> Duration {
        for key in ["a:" + address, "n:" + name] {
            serial += 1
            failures[key] = ((failures[key]?.count ?? 0) + 1, serial)
        }
        if failures.count > Self.capacity {
            for (key, _) in failures.sorted(by: { $0.value.serial < $1.value.serial }).prefix(failures.count - Self.capacity) {
                failures[key] = nil
            }
        }
        return delay(address: address, name: name)
    }

    func succeeded(address: String, name: String) {
        failures["a:" + address] = nil
        failures["n:" + name] = nil
    }

    /// How many failures in a row `address` has, for tests and logs.
    func failures(ofAddress address: String) -> Int { failures["a:" + address]?.count ?? 0 }
}
