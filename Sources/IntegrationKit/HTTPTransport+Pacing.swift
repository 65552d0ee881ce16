import Core
import Foundation

extension HTTPTransport {
    /// Sends a request the way every integration must: under its host's permit (so requests in
    /// flight together see each other's quota), in its turn by the quota, counted, and noting
    /// the quota the answer reports.
    ///
    /// A request whose turn is later than a moment away waits for it with the host's permit and
    /// the feed's sync slot handed back (``Core/Waiter``), so other feeds and other requests to
    /// the host go on meanwhile.
    ///
    ///     let response = try await transport.sendPaced(request, gate: context.hosts, pacer: pacer, waiter: context.waiter,
    ///                                                  requests: context.requests, operation: "reading the timeline from example.social")
    ///
    /// - Parameters:
    ///   - adjust: rewrites the answer before its quota is read (Bluesky sends its reset as a
    ///     Unix time where the IETF field has seconds from now).
    /// - Throws: the transport's ``Core/ServiceError``, or the pacer's `.rateLimited`, with
    ///   `operation` as what was being done.
    public func sendPaced(_ request: HTTPRequest, gate: HostGate, pacer: RateLimitPacer, waiter: Waiter = .plain,
                          requests: RequestCounter, operation: String,
                          adjust: @escaping @Sendable (HTTPResponse) -> HTTPResponse = { $0 }) async throws -> HTTPResponse {
        let host = Origin(request.url)?.gateKey ?? request.url.absoluteString
        do {
            return try await gate.withPermit(for: host) {
                // The turn is taken under the permit, after the answers of requests that went before.
                let wait = try await pacer.turn(operation).timeIntervalSinceNow
                if wait > 0, let name = request.url.host { traffic?.rateLimitWait(host: name) }
                try await waiter.wait(wait, handingBack: host, of: gate)
                requests.add()
                let response = adjust(try await send(request))
                await pacer.record(response)
                return response
            }
        } catch let error as ServiceError {
            throw ServiceError(error.code, operation, error.reason)
        }
    }
}
