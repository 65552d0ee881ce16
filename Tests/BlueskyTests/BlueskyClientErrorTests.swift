@testable import Bluesky
import Core
import Foundation
import IntegrationKit
import Testing

/// XRPC error bodies (`{"error", "message"}`) as the client reads them with JSONReader.
@Suite struct BlueskyClientErrorTests {
    func error(_ status: Int, _ body: String) -> ServiceError? {
        BlueskyClient.error(for: HTTPResponse(status: status, body: Data(body.utf8)), "reading the timeline from pds.example")
    }

    @Test func expiredAndInvalidTokensAreUnauthorizedWithTheServersWords() throws {
        let expired = try #require(error(400, #"{"error":"ExpiredToken","message":"Token has expired"}"#))
        #expect(expired.code == .unauthorized && expired.reason.contains("ExpiredToken: Token has expired"), "\(expired.reason)")
        #expect(error(400, #"{"message":"bad","error":"InvalidToken"}"#)?.code == .unauthorized, "in any order")
        #expect(error(200, "{}") == nil)
    }

    @Test func hostileBodiesGiveNoDetailAndNeverCrash() throws {
        for body in ["not json", #"{"error":5,"message":null}"#, #"{"error":"X"} trailing"#, "", String(repeating: "[", count: 10_000)] {
            let refused = try #require(error(400, body))
            #expect(refused.code != .unauthorized && !refused.reason.contains("(X)"), "\(body.prefix(20)): \(refused.reason)")
        }
        let escaped = try #require(error(502, #"{"error":"Upstream\u001b[31m","message":"down"}"#))
        #expect(!escaped.reason.contains("\u{1b}"), "control characters are shown escaped: \(escaped.reason)")
    }
}
