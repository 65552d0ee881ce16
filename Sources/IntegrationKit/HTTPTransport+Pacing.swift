import Core

extension HTTPTransport {
    /// Sends a request the way every integration must: under its host's permit (so requests in
    /// flight together see each other's quota), after waiting out a spent quota, counted, and
    /// noting the quota the answer reports.
    ///
    ///     let response = try await transport.sendPaced(request, gate: context.hosts, pacer: pacer,
    ///                                                  requests: context.requests, operation: "reading the timeline from example.social")
    ///
    /// - Parameters:
    ///   - adjust: rewrites the answer before its quota is read (Bluesky sends its reset as a
    ///     Unix time where the IETF field has seconds from now).
    /// - Throws: the transport's ``Core/ServiceError``, or the pacer's `.rateLimited`, with
    ///   `operation` as what was being done.
    public func sendPaced(_ request: HTTPRequest, gate: HostGate, pacer: RateLimitPacer, requests: RequestCounter, operation: String,
                          adjust: @escaping @Sendable (HTTPResponse) -> HTTPResponse = { $0 }) async throws -> HTTPResponse {
        do {
            return try await gate.withPermit(for: Origin(request.url)?.gateKey ?? request.url.absoluteString) {
                if try await pacer.waitForQuota(operation) > 0, let host = request.url.host {
                    traffic?.rateLimitWait(host: host)
                }
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
