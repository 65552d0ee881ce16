/// FNV-1a, 64 bits: a hash of bytes that is the same in every process and on every run (unlike
/// `Hasher`, which is seeded per process), for keys and orders that must not depend on the
/// process. Not cryptographic.
public enum FNV1a {
    /// The hash of no bytes, where a hash starts.
    public static let offset: UInt64 = 0xcbf2_9ce4_8422_2325

    /// The hash of `bytes`, continued from `start` (another hash, to hash one text after another).
    @inlinable
    public static func hash<Bytes: Sequence<UInt8>>(_ bytes: Bytes, from start: UInt64 = offset) -> UInt64 {
        bytes.reduce(start) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }
}
