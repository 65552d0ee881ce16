/// Limits how many requests are in flight to each host at once, across every feed of a process.
///
/// The daemon shares one gate among all integrations, so feeds that live on one server take
/// turns instead of hammering it: with a limit of 1, requests to a host go one at a time.
///
///     try await gate.withPermit(for: "feed.example.com:443") { try await send(request) }
public actor HostGate {
    public let maxInFlightPerHost: Int
    private var inFlight: [String: Int] = [:]
    private var waiters: [String: [CheckedContinuation<Void, Never>]] = [:]

    public init(maxInFlightPerHost: Int = 1) {
        self.maxInFlightPerHost = max(1, maxInFlightPerHost)
    }

    /// Runs `body` once fewer than the limit of requests to `host` are in flight.
    public nonisolated func withPermit<T: Sendable>(for host: String, _ body: @Sendable () async throws -> T) async throws -> T {
        await acquire(host)
        do {
            let result = try await body()
            await release(host)
            return result
        } catch {
            await release(host)
            throw error
        }
    }

    private func acquire(_ host: String) async {
        if inFlight[host, default: 0] < maxInFlightPerHost {
            inFlight[host, default: 0] += 1
            return
        }
        // The permit is handed over by `release`, so the count stays as it is.
        await withCheckedContinuation { waiters[host, default: []].append($0) }
    }

    private func release(_ host: String) {
        if var queue = waiters[host], !queue.isEmpty {
            let next = queue.removeFirst()
            waiters[host] = queue.isEmpty ? nil : queue
            next.resume()
        } else {
            inFlight[host, default: 1] -= 1
            if inFlight[host] == 0 { inFlight[host] = nil }
        }
    }

    /// Requests to `host` in flight now, for tests.
    public func inFlightCount(for host: String) -> Int { inFlight[host, default: 0] }
}
