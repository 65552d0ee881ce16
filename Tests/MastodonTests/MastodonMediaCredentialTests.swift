import Core
import Foundation
@testable import Mastodon
import Testing

/// The access token the media archive may send: to the server's own origin only (the archive
/// compares origins); none when the token is a deferred placeholder.
@Suite struct MastodonMediaCredentialTests {
    func credential(_ environment: [String: String]) throws -> MediaCredential? {
        guard case .object(let object) = try JSONDecoder().decode(ConfigValue.self, from: Data(
            #"{"integration": "mastodon", "server": "https://example.social", "accessTokenEnv": "T", "timeline": "home"}"#.utf8))
        else { return nil }
        let section = ConfigSection(object, path: "feeds[0].posts", context: ConfigContext(
            fileName: "f", directory: URL(fileURLWithPath: "/"), environment: environment))
        return try MastodonIntegration.descriptor.posts?.mediaCredential?(section)
    }

    @Test func theTokenIsForTheServersOwnOrigin() throws {
        let made = try #require(try credential(["T": "tok123"]))
        #expect(made.server.absoluteString == "https://example.social")
        #expect(made.authorization.revealed == "Bearer tok123")
    }

    @Test func aMissingTokenIsAnErrorNamingItsVariable() {
        #expect { try credential([:]) } throws: { "\($0)".contains("T") }
    }
}
