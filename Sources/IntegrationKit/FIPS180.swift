/// FIPS 180-4's preprocessing, which ``SHA1`` and ``SHA256`` share: the message padded to a
/// multiple of 512 bits with its length in bits at the end (§5.1.1), then read as big-endian
/// 32-bit words (§5.2.1), sixteen to a block.
enum FIPS180 {
    /// The padded message's words; each block is sixteen of them.
    static func paddedWords(_ message: some Collection<UInt8>) -> [UInt32] {
        var padded = Array(message)
        let bitLength = UInt64(padded.count) &* 8
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { padded.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        return stride(from: 0, to: padded.count, by: 4).map { offset in
            UInt32(padded[offset]) << 24 | UInt32(padded[offset + 1]) << 16 | UInt32(padded[offset + 2]) << 8 | UInt32(padded[offset + 3])
        }
    }
}
