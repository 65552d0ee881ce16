import Foundation
import IntegrationKit
import Testing

/// libsodium's argon2id and SHA-256 as the reader listener uses them.
@Suite struct PasswordHashTests {
    @Test func aHashIsArgon2idSaltedAndVerifiesOnlyItsPassword() throws {
        let first = try PasswordHash.make(for: "correct horse battery")
        let second = try PasswordHash.make(for: "correct horse battery")
        #expect(first.hasPrefix("$argon2id$v=19$m=65536,t=2,p=1$"), "\(first)")
        #expect(first != second, "each hash has its own salt")
        #expect(!first.contains("correct"))
        #expect(PasswordHash.verify("correct horse battery", against: first))
        #expect(PasswordHash.verify("correct horse battery", against: second))
        #expect(!PasswordHash.verify("correct horse batterY", against: first))
        #expect(!PasswordHash.verify("", against: first))
        #expect(!PasswordHash.verify("correct horse battery\u{0}", against: first), "a NUL is part of the password, not its end")
        #expect(!PasswordHash.verify("anything", against: "not a hash"))
        #expect(!PasswordHash.verify("anything", against: String(repeating: "x", count: 10_000)))
        #expect(!PasswordHash.verify(String(repeating: "x", count: PasswordHash.maximumPasswordBytes + 1), against: first))
        let unicode = try PasswordHash.make(for: "pâté 🎉 \u{0}nul")
        #expect(PasswordHash.verify("pâté 🎉 \u{0}nul", against: unicode) && !PasswordHash.verify("pâté 🎉 ", against: unicode))
    }

    /// FIPS 180-2's own examples of SHA-256.
    @Test func theTokenDigestIsSHA256() {
        #expect(PasswordHash.digest(ofToken: "abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(PasswordHash.digest(ofToken: "") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(PasswordHash.digest(ofToken: "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func tokensAre32RandomBytesInHex() {
        let tokens = (0..<100).map { _ in PasswordHash.randomToken().revealed }
        #expect(Set(tokens).count == 100)
        #expect(tokens.allSatisfy { $0.count == 64 && $0.allSatisfy { "0123456789abcdef".contains($0) } })
    }
}
