import Core
import Foundation
@testable import Mastodon
import Testing

/// The parts of the login that need no server.
@Suite struct MastodonLoginTests {
    @Test func pkceChallengeIsRFC7636sAppendixBExample() {
        let pkce = MastodonLogin.PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    @Test func aFreshVerifierIs43UnreservedCharacters() {
        let verifier = MastodonLogin.PKCE().verifier
        #expect(verifier.count == 43)
        #expect(verifier.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-._~".contains($0)) })
        #expect(MastodonLogin.PKCE().verifier != verifier)
    }

    @Test func theAuthorizationURLCarriesStateChallengeAndEncodedRedirect() throws {
        let login = MastodonLogin(server: URL(string: "https://example.social")!)
        let url = login.authorizationURL(app: .init(clientID: "id+1", clientSecret: "s"), redirectURI: "http://127.0.0.1:5/callback",
                                         state: "st", challenge: "ch")
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        let query = Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { a, _ in a })
        #expect(url.path == "/oauth/authorize")
        #expect(query["client_id"] == "id+1" && url.absoluteString.contains("client_id=id%2B1"))
        #expect(query["redirect_uri"] == "http://127.0.0.1:5/callback" && query["state"] == "st")
        #expect(query["code_challenge"] == "ch" && query["code_challenge_method"] == "S256" && query["response_type"] == "code")
        #expect(query["scope"] == MastodonLogin.scopes)
    }
}

@Suite struct MastodonLoginReadingTests {
    @Test func anAppAnswerIsRead() throws {
        let body = #"{"id": "1", "name": "feedsync", "website": "x", "redirect_uri": "urn:ietf:wg:oauth:2.0:oob", "redirect_uris": ["urn:ietf:wg:oauth:2.0:oob"], "scopes": ["read:statuses"], "client_id": "U-fa", "client_secret": "Gd", "vapid_key": ""}"#
        let fields = try MastodonLogin.stringFields(Data(body.utf8))
        #expect(fields["client_id"] == "U-fa" && fields["client_secret"] == "Gd" && fields["redirect_uri"] == "urn:ietf:wg:oauth:2.0:oob")
    }
}
