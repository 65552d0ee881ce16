import Core

/// A short digest of a connection's credentials (FNV-1a, 64 bits, in hex), to tell accounts
/// apart in a live source's connection key without keeping the secret there.
///
/// Not a cryptographic hash: the key stays in memory and is never shown; it only has to differ
/// between two accounts of one process. The Mastodon and Bluesky live sources share it.
public enum ConnectionDigest {
    public static func of(_ text: String) -> String {
        String(FNV1a.hash(text.utf8), radix: 16)
    }
}
