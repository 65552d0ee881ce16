import Foundation
import Core
import IntegrationKit
import Testing

/// The one check of a value bound for a request line or header (RFC 9110 §5.5, tightened to
/// visible ASCII), case by case.
@Suite struct HeaderValueTests {
    // (value, allowsSpace, accepted)
    static let cases: [(String, Bool, Bool)] = [
        ("eyJ0eXAiOiJKV1QifQ.eyJzdWIiOiJkaWQ6cGxjOmFiYyJ9.c2ln", false, true),
        ("!", false, true), ("~", false, true), (#""v7""#, false, true), (#"W/"v7""#, false, true),
        ("a%0D%0Ab", false, true),                       // percent-encoded CR LF is text
        ("Bearer tok", true, true), ("Tue, 15 Nov 1994 08:12:31 GMT", true, true),
        ("Bearer tok", false, false),                    // a space where the value is one word
        (" tok", true, false), ("tok ", true, false),    // never first or last
        ("", false, false), ("", true, false),
        ("tok\r\nX-Injected: 1", false, false), ("tok\r\nX-Injected: 1", true, false),
        ("tok\r", false, false), ("tok\n", true, false), ("a\u{0}b", false, false), ("a\tb", true, false),
        ("a\u{7F}b", false, false), ("a\u{1B}[31mb", false, false), ("a\u{85}b", false, false),
        ("caf\u{E9}", false, false), ("\u{1F600}", false, false), ("a\u{2028}b", true, false),
    ]

    @Test(arguments: cases) func valueCase(_ value: String, _ allowsSpace: Bool, _ accepted: Bool) {
        #expect(HeaderValue.isValid(value, allowsSpace: allowsSpace) == accepted, "\(value.debugDescription)")
        let thrown = (try? HeaderValue.check(value, "token", "logging in", allowsSpace: allowsSpace)) == nil
        #expect(thrown != accepted)
    }

    @Test func everyByteOutsideVisibleASCIIIsRefused() {
        for scalar in (0...0x7F).compactMap(Unicode.Scalar.init) {
            let value = "a\(scalar)b"
            #expect(HeaderValue.isValid(value) == (0x21...0x7E).contains(scalar.value), "0x\(String(scalar.value, radix: 16))")
            #expect(HeaderValue.isValid(value, allowsSpace: true) == (0x20...0x7E).contains(scalar.value))
        }
    }

    @Test func theRefusalIsOneSentenceThatNamesTheByteNotTheValue() throws {
        let error = #expect(throws: ServiceError.self) {
            try HeaderValue.check("secret-token\r\nX-Injected: 1", "accessJwt", "logging in to bsky.test")
        }
        #expect(error?.code == .contractViolation)
        #expect(error?.description == "logging in to bsky.test: the accessJwt holds byte 0xD at position 12, which a request header cannot "
                + "carry (only visible ASCII is sent); it is neither sent nor stored")
        #expect(error?.description.contains("secret") == false)
    }
}

/// The transport is the last gate: a request whose headers would split is never sent.
@Suite struct TransportHeaderGateTests {
    @Test func aHeaderValueWithCRLFNeverLeavesTheProcess() async throws {
        // Port 9 on loopback: nothing should even try to connect; the refusal comes first.
        let transport = CurlTransport(limits: HTTPLimits())
        for headers in [["Authorization": "Bearer tok\r\nX-Injected: 1"], ["If-None-Match": "\"v1\"\n"], ["X\r\nY": "1"], ["Accept": ""]] {
            let request = HTTPRequest(url: URL(string: "http://127.0.0.1:9/v1/feed")!, headers: headers)
            let error = await #expect(throws: ServiceError.self) { try await transport.send(request) }
            #expect(error?.code == .contractViolation && error?.reason.hasSuffix("it is neither sent nor stored") == true, "\(headers)")
            #expect(error?.description.contains("tok") == false, "the value is not printed")
        }
    }
}
