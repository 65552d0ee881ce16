import Core

extension MockVideoHostIntegration {
    /// The fake video host as the registry lists it: a catalog file with seeded latency and failures.
    public static let descriptor = IntegrationDescriptor(
        name: "mockvideohost", summary: "a fake video host that answers from a catalog file",
        example: #"{"integration": "mockvideohost", "catalog": "Fixtures/videos/catalog.json", "latencyMs": 0, "failureRate": 0, "seed": 1}"#,
        keys: [
            ConfigKey("catalog", .path, .required, "the catalog JSON ({\"videos\": [...]})"),
            ConfigKey("latencyMs", .int(0...60_000), default: "0", "added to each lookup, in milliseconds"),
            ConfigKey("failureRate", .double(0...1), default: "0", "the fraction of lookups that fail"),
            ConfigKey("seed", .int(0...Int.max), default: "1", "seeds the failure decisions, so a run repeats exactly"),
        ],
        videos: VideosCapability(makeService: makeVideoService))
}
