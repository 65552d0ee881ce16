/// A long-running part of the daemon, in the shape of swift-service-lifecycle's `Service`.
///
/// It runs until its ``GracefulShutdown`` is requested (or its task is cancelled), then winds
/// down — starts no new work, lets the work under way finish or abort, cleans up — and returns.
protocol Service: Sendable {
    /// Names the service for ``dependencies`` and messages.
    var name: String { get }
    /// The services this one uses while it runs: they start before it and stop after it.
    var dependencies: [String] { get }
    func run(until shutdown: GracefulShutdown) async
}

extension Service {
    var dependencies: [String] { [] }
}

/// Starts services so that each starts after what it depends on, and stops them the other way
/// round: a service is asked to shut down gracefully, and awaited, only once every service that
/// depends on it has returned. Stop order follows dependencies, never list position.
///
///     let group = try ServiceGroup([scheduler, heartbeat, runtime])   // scheduler depends on heartbeat, …
///     await group.start()
///     await group.stop()   // scheduler, then heartbeat, then runtime
///
/// Each service runs in a task of its own, because stopping in order means shutting down and
/// awaiting them one at a time, which a task group (cancel all at once) cannot do.
actor ServiceGroup {
    /// A dependency that names no service of the group, or services that depend on each other.
    struct ConfigurationError: Error, CustomStringConvertible {
        var description: String
    }

    /// The services in start order: each after every service it depends on.
    private let order: [any Service]
    private var running: [(task: Task<Void, Never>, shutdown: GracefulShutdown)] = []

    /// - Throws: ``ConfigurationError`` for an unknown dependency or a cycle.
    init(_ services: [any Service]) throws {
        order = try Self.startOrder(services)
    }

    /// The names in start order, for tests and logs.
    var startOrder: [String] { order.map(\.name) }

    func start() {
        running = order.map { service in
            let shutdown = GracefulShutdown()
            return (Task { await service.run(until: shutdown) }, shutdown)
        }
    }

    /// Shuts the services down gracefully one at a time, in reverse start order, each awaited
    /// before the next (what it depends on) is asked.
    func stop() async {
        while let (task, shutdown) = running.popLast() {
            shutdown.request()
            await task.value
        }
    }

    /// List order, except that a service moves after the ones it depends on (a depth-first
    /// walk in list order, so independent services keep their places).
    static func startOrder(_ services: [any Service]) throws -> [any Service] {
        let byName = Dictionary(services.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var placed: Set<String> = []
        var visiting: Set<String> = []
        var order: [any Service] = []
        func place(_ service: any Service) throws {
            guard !placed.contains(service.name) else { return }
            guard visiting.insert(service.name).inserted else {
                throw ConfigurationError(description: "services \(visiting.sorted().joined(separator: ", ")) depend on each other")
            }
            for name in service.dependencies {
                guard let dependency = byName[name] else {
                    throw ConfigurationError(description: "service \(service.name) depends on \(name), which is not in the group")
                }
                try place(dependency)
            }
            visiting.remove(service.name)
            placed.insert(service.name)
            order.append(service)
        }
        for service in services { try place(service) }
        return order
    }
}
