import Foundation
@testable import HTTPAPI
import IntegrationKit
import Testing

/// The login and refresh answer, read by IntegrationKit's JSONReader: what it takes and what it refuses.
@Suite struct APITokenResponseTests {
    @Test func readsEveryField() throws {
        let token = try APITokenResponse(body: Data(#"{"access_token":"A","refresh_token":"R","token_type":"Bearer","expires_in":3600,"scope":["x"]}"#.utf8))
        #expect(token.accessToken == "A" && token.refreshToken == "R" && token.tokenType == "Bearer" && token.expiresIn == 3600)
    }

    @Test func optionalFieldsMayBeNullOrMissing() throws {
        let token = try APITokenResponse(body: Data(#"{"refresh_token":null,"access_token":"A","expires_in":1.5}"#.utf8))
        #expect(token.accessToken == "A" && token.refreshToken == nil && token.tokenType == nil && token.expiresIn == 1.5)
    }

    @Test(arguments: [
        "",
        "[]",
        #"{"refresh_token":"R"}"#,
        #"{"access_token":null}"#,
        #"{"access_token":7}"#,
        #"{"access_token":"A","expires_in":"3600"}"#,
        #"{"access_token":"A","expires_in":1e400}"#,
        #"{"access_token":"A","token_type":5}"#,
        #"{"access_token":"A"} {}"#,
        #"{"access_token":"A""#,
    ])
    func refusesWhatIsNotATokenResponse(body: String) {
        #expect(throws: (any Error).self) { try APITokenResponse(body: Data(body.utf8)) }
    }
}
