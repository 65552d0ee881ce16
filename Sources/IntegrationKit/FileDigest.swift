import CSodium
import Foundation

/// The SHA-256 of a file, read in blocks, so a file of any size costs one block of memory.
public enum FileDigest {
    /// The digest of the file at `path` as 64 lower-case hex digits; `nil` when it cannot be read.
    public static func sha256Hex(ofFileAt path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var state = crypto_hash_sha256_state()
        guard sodium_init() >= 0, crypto_hash_sha256_init(&state) == 0 else { return nil }
        while true {
            let block: Data?
            do { block = try handle.read(upToCount: 1 << 20) } catch { return nil }
            guard let block, !block.isEmpty else { break }
            _ = block.withUnsafeBytes { crypto_hash_sha256_update(&state, $0.bindMemory(to: UInt8.self).baseAddress, UInt64($0.count)) }
        }
        var out = [UInt8](repeating: 0, count: 32)
        guard crypto_hash_sha256_final(&state, &out) == 0 else { return nil }
        return out.map { String(format: "%02x", $0) }.joined()
    }
}
