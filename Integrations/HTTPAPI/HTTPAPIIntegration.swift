import Core
import Foundation
import IntegrationKit

/// The `"httpapi"` posts integration: the custom HTTP API of API.md.
///
///     {"integration": "httpapi", "baseURL": "http://127.0.0.1:8080", "username": "demo",
///      "passwordEnv": "FEEDSYNC_PASSWORD", "pageSize": 200, "timeoutSeconds": 30}
///
/// Instead of `baseURL`, `"fixture": "Fixtures/demo-feed"` replays recorded responses offline.
public enum HTTPAPIIntegration {
    public static func makeBackend(_ config: ConfigSection, context: IntegrationContext) throws -> FeedBackend {
        let baseURL = try config.serverURL("baseURL", allowInsecureHTTP: config.bool("allowInsecureHTTP") ?? false, insecureHint: insecureHint)
        let fixture = try config.path("fixture")
        let limits = try HTTPLimits(config)
        let transport: any HTTPTransport
        let server: String
        var base = URL(string: "http://fixture.invalid")!
        switch (baseURL, fixture) {
        case (let url?, nil):
            transport = CurlTransport.shared(limits, in: context.shared)
            server = url.absoluteString
            base = url
        case (nil, let directory?):
            do {
                transport = try FixtureTransport(directory: directory)
            } catch {
                throw config.error("fixture", error.reason)
            }
            server = "fixture \(directory.path)"
        case (nil, nil):
            throw config.error(nil, "needs \"baseURL\" (the server) or \"fixture\" (a folder of recorded responses)")
        case (.some, .some):
            throw config.error(nil, "give either \"baseURL\" or \"fixture\", not both")
        }
        let username = try config.require(config.nonEmptyString("username"), "username")
        let password = try config.secret("password")
        let pageSize = try config.int("pageSize", in: 1...1000) ?? 100
        try config.finish(alsoKnown: ["integration"])

        let client = HTTPAPIClient(transport: transport, baseURL: base, server: server, requests: context.requests, gate: context.hosts,
                                   pacer: RateLimitPacer.shared(for: base, account: "\(username) on \(server)", in: context.shared, log: context.log),
                                   waiter: context.waiter)
        return FeedBackend(
            posts: HTTPAPIPostService(client: client, pageSize: pageSize),
            authentication: HTTPAPIAuthenticationService(client: client, username: username, password: password, now: { Date() }),
            lifecycle: HTTPAPIManager(transport: transport, server: server),
            identity: "httpapi \(server) user \(username)",
            account: account(server: server, username: username))
    }

}
