/// A short digest of a connection's credentials (FNV-1a, 64 bits, in hex), to tell accounts
/// apart in a live source's connection key without keeping the secret there.
///
/// Not a cryptographic hash: the key stays in memory and is never shown; it only has to differ
/// between two accounts of one process. The Mastodon and Bluesky live sources share it.
public enum ConnectionDigest {
    public static func of(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }
}
