import IntegrationKit
import Testing

/// FNV-1a 64 against the reference vectors of its authors' test suite.
@Suite struct ConnectionDigestTests {
    @Test func referenceVectors() {
        #expect(ConnectionDigest.of("") == "cbf29ce484222325")
        #expect(ConnectionDigest.of("a") == "af63dc4c8601ec8c")
        #expect(ConnectionDigest.of("foobar") == "85944171f73967e8")
        #expect(ConnectionDigest.of("token-a") != ConnectionDigest.of("token-b"))
    }
}
