import Core

/// Releases the Mastodon client's connections at teardown.
struct MastodonManager: IntegrationLifecycle {
    let client: MastodonClient

    var name: String { "mastodon \(client.server.absoluteString)" }

    func setUp() async throws {}

    func tearDown() async { await client.close() }
}
