import Core
import IntegrationKit

/// Releases the HTTP API's connections at teardown. Setup needs nothing: the first request
/// opens a connection.
struct HTTPAPIManager: IntegrationLifecycle {
    let transport: any HTTPTransport
    let server: String

    var name: String { "http api \(server)" }

    func setUp() async throws {}

    func tearDown() async { await transport.close() }
}
