import Core

/// Releases the Bluesky client's connections at teardown.
struct BlueskyManager: IntegrationLifecycle {
    let client: BlueskyClient

    var name: String { "bluesky \(client.service.absoluteString)" }

    func setUp() async throws {}

    func tearDown() async { await client.close() }
}
