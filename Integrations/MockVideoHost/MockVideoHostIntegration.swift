import Core
import Foundation

/// The `"mockvideohost"` video integration:
/// `{"integration": "mockvideohost", "catalog": "Fixtures/videos/catalog.json", "latencyMs": 0, "failureRate": 0, "seed": 1}`.
public enum MockVideoHostIntegration {
    public static func makeVideoService(_ config: ConfigSection, context: IntegrationContext) throws -> Managed<any VideoService> {
        let catalog = try config.require(config.path("catalog"), "catalog")
        guard FileManager.default.isReadableFile(atPath: catalog.path) else {
            throw config.error("catalog", "cannot read \(catalog.path)")
        }
        let latency = try config.int("latencyMs", in: 0...60_000) ?? 0
        let failureRate = try config.double("failureRate", in: 0...1) ?? 0
        let seed = try config.int("seed", in: 0...Int.max) ?? 1
        try config.finish(alsoKnown: ["integration"])
        let host = MockVideoHost(settings: .init(catalog: catalog, latency: .milliseconds(latency),
                                                 failureRate: failureRate, seed: UInt64(seed)),
                                 requests: context.requests)
        return Managed(host, lifecycle: MockVideoHostManager(host: host))
    }
}
