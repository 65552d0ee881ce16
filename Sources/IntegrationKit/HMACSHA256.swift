import Foundation

/// HMAC-SHA256 (RFC 2104 over FIPS 180-4's SHA-256, ``SHA256``): what signs a webhook's
/// delivery, so its receiver can tell the body came from the holder of the shared secret.
///
///     let signature = HMACSHA256.hex(key: Data(secret.revealed.utf8), message: Data("\(timestamp).".utf8) + body)
public enum HMACSHA256 {
    /// SHA-256's block size, in bytes.
    static let blockSize = 64

    /// The 32-byte authentication code of `message` under `key`.
    public static func code(key: Data, message: Data) -> Data {
        var block = key.count > blockSize ? SHA256.digest(key) : key
        block.append(Data(repeating: 0, count: blockSize - block.count))
        let inner = Data(block.map { $0 ^ 0x36 }) + message
        let outer = Data(block.map { $0 ^ 0x5c }) + SHA256.digest(inner)
        return SHA256.digest(outer)
    }

    /// The code as 64 lower-case hex digits.
    public static func hex(key: Data, message: Data) -> String {
        code(key: key, message: message).map { String(format: "%02x", $0) }.joined()
    }
}
