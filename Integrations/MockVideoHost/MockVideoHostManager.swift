import Core

/// Loads the mock host's catalog at setup.
public struct MockVideoHostManager: IntegrationLifecycle {
    let host: MockVideoHost

    public var name: String { "mock video host \(host.settings.catalog.path)" }

    public func setUp() async throws { try await host.load() }

    public func tearDown() async {}
}
