import Core

/// Sets up every integration in order and tears them down in reverse.
///
/// If one fails to set up, those already set up are torn down before the error is thrown.
public actor IntegrationsManager {
    private let lifecycles: [any IntegrationLifecycle]
    private var running: [any IntegrationLifecycle] = []

    public init(_ lifecycles: [any IntegrationLifecycle]) {
        self.lifecycles = lifecycles
    }

    public func setUp() async throws {
        for lifecycle in lifecycles {
            do {
                try await lifecycle.setUp()
                running.append(lifecycle)
            } catch {
                await tearDown()
                throw error
            }
        }
    }

    public func tearDown() async {
        while let lifecycle = running.popLast() { await lifecycle.tearDown() }
    }
}
