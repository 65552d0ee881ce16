import Core
import Foundation
import IntegrationKit

/// The `"youtube"` video host: the YouTube videos web feed entries link, described by oEmbed.
public enum YouTubeIntegration {
    /// Where oEmbed answers when the section names no other endpoint.
    static let defaultEndpoint = "https://www.youtube.com/oembed"

    public static let descriptor = IntegrationDescriptor(
        name: "youtube", summary: "YouTube videos that posts link, described by YouTube's oEmbed endpoint (no key)",
        example: #"{"integration": "youtube", "oembedURL": "https://www.youtube.com/oembed"}"#,
        keys: [ConfigKey("oembedURL", .url, default: defaultEndpoint, "the oEmbed endpoint (a test's loopback server)")] + HTTPLimits.keys,
        videos: VideosCapability(makeService: makeVideoService))

    static func makeVideoService(_ config: ConfigSection, context: IntegrationContext) throws -> Managed<any VideoService> {
        let endpoint = try config.httpURL("oembedURL") ?? URL(string: defaultEndpoint)!
        let limits = try HTTPLimits(config)
        try config.finish(alsoKnown: ["integration"])
        let service = YouTubeOEmbedService(endpoint: endpoint, transport: CurlTransport.shared(limits, in: context.shared), hosts: context.hosts,
                                           requests: context.requests, log: context.log, userAgent: context.userAgent)
        return Managed(service, lifecycle: YouTubeManager())
    }
}

/// Nothing to set up: connections belong to the shared transport.
struct YouTubeManager: IntegrationLifecycle {
    var name: String { "youtube video host" }
    func setUp() async throws {}
    func tearDown() async {}
}
