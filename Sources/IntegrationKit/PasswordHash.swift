import CSodium
import Core
import Foundation

/// The reader listener's secrets, through libsodium: passwords kept as argon2id hashes
/// (`crypto_pwhash_str`, its own salt and parameters in the string), and tokens that are 32
/// random bytes, kept as their SHA-256 (a token is high-entropy, so a fast hash suffices).
///
/// ```swift
/// let stored = try PasswordHash.make(for: "correct horse")   // "$argon2id$v=19$m=65536,t=2,p=1$…"
/// PasswordHash.verify("correct horse", against: stored)      // true
/// ```
public enum PasswordHash {
    /// The longest password accepted, in bytes: argon2id reads all of it.
    public static let maximumPasswordBytes = 1_024

    /// The error hashing a password can end in: libsodium could not start or allocate its memory.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private static let ready: Bool = sodium_init() >= 0

    /// The argon2id hash of `password` with libsodium's interactive limits (2 passes, 64 MiB).
    ///
    /// - Throws: ``Failure`` when libsodium cannot start or cannot allocate the hash's memory.
    public static func make(for password: String) throws -> String {
        guard ready else { throw Failure(description: "libsodium could not start") }
        var output = [CChar](repeating: 0, count: Int(crypto_pwhash_STRBYTES))
        let length = UInt64(password.utf8.count)
        let result = password.withCString { chars in
            crypto_pwhash_str(&output, chars, length, UInt64(crypto_pwhash_OPSLIMIT_INTERACTIVE), Int(crypto_pwhash_MEMLIMIT_INTERACTIVE))
        }
        guard result == 0 else { throw Failure(description: "libsodium could not allocate the memory argon2id needs (64 MiB)") }
        let end = output.firstIndex(of: 0) ?? output.endIndex
        return String(decoding: output[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `password` is the one `hash` was made from; `false` for a hash that is not one.
    public static func verify(_ password: String, against hash: String) -> Bool {
        guard ready, password.utf8.count <= maximumPasswordBytes, hash.utf8.count < Int(crypto_pwhash_STRBYTES) else { return false }
        let length = UInt64(password.utf8.count)
        return password.withCString { chars in crypto_pwhash_str_verify(hash, chars, length) == 0 }
    }

    /// A new token: 32 random bytes from libsodium's generator, as 64 hex digits.
    public static func randomToken() -> Secret {
        _ = ready
        var bytes = [UInt8](repeating: 0, count: 32)
        randombytes_buf(&bytes, bytes.count)
        return Secret(hex(bytes))
    }

    /// The SHA-256 of `token`, as 64 hex digits: what the store keeps of a token.
    public static func digest(ofToken token: String) -> String {
        _ = ready
        var output = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        let bytes = Array(token.utf8)
        _ = crypto_hash_sha256(&output, bytes, UInt64(bytes.count))
        return hex(output)
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
