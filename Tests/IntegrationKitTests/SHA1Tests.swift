import IntegrationKit
import Testing

/// SHA-1 against the FIPS 180-2 appendix examples (and the NIST one-million-"a" vector).
@Suite struct SHA1Tests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test(arguments: [
        ("abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
        ("", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        // 64 bytes: the padding needs a block of its own.
        (String(repeating: "a", count: 64), "0098ba824b5c16427bd7a1122a5a442a25ec644d"),
    ])
    func fipsVectors(_ input: String, _ digest: String) {
        #expect(Self.hex(SHA1.digest(Array(input.utf8))) == digest)
    }

    @Test func oneMillionA() {
        #expect(Self.hex(SHA1.digest([UInt8](repeating: 0x61, count: 1_000_000))) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }
}
