import Core
import Foundation
import IntegrationKit

/// The `"peertube"` video host: resolves the PeerTube watch URLs posts link
/// (`{"integration": "peertube"}` as a feed's `"videos"`; see README.md).
public enum PeerTubeIntegration {
    public static let descriptor = IntegrationDescriptor(
        name: "peertube", summary: "PeerTube videos that posts link, resolved on their instance",
        example: #"{"integration": "peertube", "timeoutSeconds": 30}"#,
        keys: HTTPLimits.keys,
        videos: VideosCapability(makeService: makeVideoService))

    static func makeVideoService(_ config: ConfigSection, context: IntegrationContext) throws -> Managed<any VideoService> {
        let limits = try HTTPLimits(config)
        try config.finish(alsoKnown: ["integration"])
        let transport = CurlTransport.shared(limits, in: context.shared)
        let service = PeerTubeVideoService(transport: transport, hosts: context.hosts, requests: context.requests, log: context.log,
                                           userAgent: context.userAgent)
        return Managed(service, lifecycle: PeerTubeManager())
    }
}

/// Nothing to set up: connections belong to the shared transport.
struct PeerTubeManager: IntegrationLifecycle {
    var name: String { "peertube video host" }
    func setUp() async throws {}
    func tearDown() async {}
}
