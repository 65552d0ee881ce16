/// Limits how many requests are in flight to each host at once, across every feed of a process.
///
/// The daemon shares one gate among all integrations, so feeds that live on one server take
/// turns instead of hammering it: with a limit of 1, requests to a host go one at a time.
///
///     try await gate.withPermit(for: "feed.example.com:443") { try await send(request) }
public actor HostGate {
    public let maxInFlightPerHost: Int
    private var inFlight: [String: Int] = [:]
    /// Who waits for a permit, per host, in order of arrival.
    private var waiters: [String: WaitQueue] = [:]
    private var nextWaiter = 0

    public init(maxInFlightPerHost: Int = 1) {
        self.maxInFlightPerHost = max(1, maxInFlightPerHost)
    }

    /// Runs `body` once fewer than the limit of requests to `host` are in flight.
    ///
    /// - Throws: `CancellationError` when the task is cancelled while it waits for a permit
    ///   (it then holds none), or what `body` throws.
    public nonisolated func withPermit<T: Sendable>(for host: String, _ body: @Sendable () async throws -> T) async throws -> T {
        try await acquire(host)
        do {
            let result = try await body()
            await release(host)
            return result
        } catch {
            await release(host)
            throw error
        }
    }

    /// Runs `body` with one permit for `host` handed back meanwhile, then takes one again,
    /// waiting its turn behind whoever queued first.
    ///
    /// For a holder that must wait for something other than the host (a rate limit, a retry's
    /// backoff) without keeping others out meanwhile.
    ///
    /// - Important: Call it only while holding a permit for `host` (inside ``withPermit(for:_:)``).
    ///   The permit is taken back even if the task is cancelled meanwhile, so the enclosing
    ///   `withPermit` always gives back exactly the one it holds.
    public nonisolated func withoutPermit<T: Sendable>(for host: String, _ body: @Sendable () async throws -> T) async throws -> T {
        await release(host)
        let result: Result<T, any Error>
        do {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        await reacquire(host)
        return try result.get()
    }

    /// Takes a permit for `host` once one is free, for a holder that gives it back later with
    /// ``givePermitBack(for:)`` (rather than around one closure, as ``withPermit(for:_:)`` does):
    /// the daemon takes a sync slot first and picks the feed that gets it once it is held.
    ///
    /// - Throws: `CancellationError` when cancelled while waiting; then no permit is held.
    public func takePermit(for host: String) async throws { try await acquire(host) }

    /// Gives back a permit taken with ``takePermit(for:)``: the next waiter in line gets it.
    public func givePermitBack(for host: String) { release(host) }

    /// Takes a permit back, whether or not the task is cancelled: its holder gives it back later.
    private func reacquire(_ host: String) async {
        if inFlight[host, default: 0] < maxInFlightPerHost {
            inFlight[host, default: 0] += 1
            return
        }
        nextWaiter += 1
        let id = nextWaiter
        // No cancellation handler, so `abandon` never drops this waiter: `release` hands it a permit.
        try? await withCheckedThrowingContinuation { waiters[host, default: WaitQueue()].append((id, $0)) }
    }

    private func acquire(_ host: String) async throws {
        try Task.checkCancellation()
        if inFlight[host, default: 0] < maxInFlightPerHost {
            inFlight[host, default: 0] += 1
            return
        }
        // The permit is handed over by `release`, so the count stays as it is.
        nextWaiter += 1
        let id = nextWaiter
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { waiters[host, default: WaitQueue()].append((id, $0)) }
        } onCancel: {
            Task { await self.abandon(id, host: host) }
        }
    }

    /// A cancelled waiter leaves the queue without a permit.
    private func abandon(_ id: Int, host: String) {
        guard let waiter = waiters[host]?.remove(id: id) else { return }
        if waiters[host]?.isEmpty == true { waiters[host] = nil }
        waiter.continuation.resume(throwing: CancellationError())
    }

    private func release(_ host: String) {
        // Popped in place: with thousands of feeds queued for a slot, copying the queue per
        // release was a fifth of a 10,000-feed daemon's CPU.
        if let next = waiters[host]?.popFirst() {
            if waiters[host]?.isEmpty == true { waiters[host] = nil }
            next.continuation.resume()
        } else {
            inFlight[host, default: 1] -= 1
            if inFlight[host] == 0 { inFlight[host] = nil }
        }
    }

    /// Requests to `host` in flight now, for tests.
    public func inFlightCount(for host: String) -> Int { inFlight[host, default: 0] }
}

/// Waiters in order of arrival, popped from the front in constant time.
private struct WaitQueue {
    typealias Waiter = (id: Int, continuation: CheckedContinuation<Void, any Error>)
    private var items: [Waiter] = []
    private var head = 0

    var isEmpty: Bool { head == items.count }

    mutating func append(_ waiter: Waiter) { items.append(waiter) }

    mutating func popFirst() -> Waiter? {
        guard head < items.count else { return nil }
        let first = items[head]
        head += 1
        // The popped front is dropped now and then, so the array does not grow for ever.
        if head >= 64 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return first
    }

    mutating func remove(id: Int) -> Waiter? {
        guard let index = items[head...].firstIndex(where: { $0.id == id }) else { return nil }
        return items.remove(at: index)
    }
}
