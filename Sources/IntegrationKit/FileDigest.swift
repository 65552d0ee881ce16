import CSSL
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The SHA-256 of a file, read in blocks, so a file of any size costs one block of memory.
///
/// OpenSSL's, which uses the processor's SHA instructions where it has them: libsodium's portable
/// one took a quarter of the media archive's CPU over 10,000 images of 100 KB (`perf`), the one
/// place the archive hashes every byte it keeps.
public enum FileDigest {
    /// The digest of the file at `path` as 64 lower-case hex digits; `nil` when it cannot be read
    /// (or is a symbolic link).
    public static func sha256Hex(ofFileAt path: String) -> String? {
        let file = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard file >= 0 else { return nil }
        defer { close(file) }
        guard let context = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else { return nil }
        let size = 1 << 18
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = read(file, buffer, size)
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            guard EVP_DigestUpdate(context, buffer, count) == 1 else { return nil }
        }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(context, &digest, &length) == 1, length == 32 else { return nil }
        return hex(digest.prefix(32))
    }

    private static let digits = Array("0123456789abcdef".utf8)

    /// Lower-case hex digits of `bytes`.
    static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes { text += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
        return String(decoding: text, as: UTF8.self)
    }
}
