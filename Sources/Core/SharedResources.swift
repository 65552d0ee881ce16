import Synchronization

/// Objects that every feed of a process may share instead of each building its own: one HTTP
/// transport (and so one pool of connections) for all the web feeds with the same limits.
///
/// With thousands of feeds, a transport per feed would hold descriptors per feed; shared, they
/// grow with the hosts and the requests in flight.
///
///     let transport = context.shared.value(for: "curl \(limits)") { CurlTransport(limits: limits) }
public final class SharedResources: Sendable {
    private let values = Mutex<[String: any Sendable]>([:])
    /// Told about every request a shared transport sends (the daemon's metrics).
    public let traffic: any TrafficObserver

    public init(traffic: any TrafficObserver = NoTrafficObserver()) {
        self.traffic = traffic
    }

    /// The value kept under `key`, made by `make` the first time it is asked for.
    ///
    /// - Important: A key must always hold values of one type; another type makes a new value
    ///   that replaces the old one.
    public func value<T: Sendable>(for key: String, make: () -> T) -> T {
        values.withLock { values in
            if let value = values[key] as? T { return value }
            let value = make()
            values[key] = value
            return value
        }
    }
}
