/// A long-running part of the daemon, in the shape of swift-service-lifecycle's `Service`:
/// it runs until its task is cancelled, then cleans up and returns.
protocol Service: Sendable {
    var name: String { get }
    func run() async
}

/// Starts services in order and stops them in reverse.
///
/// Each service runs in a task of its own, because stopping in reverse order means cancelling
/// and awaiting them one at a time, which a task group (cancel all at once) cannot do.
actor ServiceGroup {
    private let services: [any Service]
    private var tasks: [Task<Void, Never>] = []

    init(_ services: [any Service]) { self.services = services }

    func start() {
        tasks = services.map { service in Task { await service.run() } }
    }

    /// Cancels the last-started service, waits for it to return, then the one before, and so on.
    func stop() async {
        while let task = tasks.popLast() {
            task.cancel()
            await task.value
        }
    }
}
