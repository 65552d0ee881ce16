import Foundation
import IntegrationKit
import Testing

/// SHA-256 against FIPS 180-4's example vectors.
@Suite struct SHA256Tests {
    @Test func matchesTheStandardVectors() {
        #expect(SHA256.hex(Data()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex(Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA256.digest(Data("abc".utf8)).map { String(format: "%02x", $0) }.joined() == SHA256.hex(Data("abc".utf8)))
    }
}
