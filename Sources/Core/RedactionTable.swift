/// Every window of ``window`` bytes of every registered secret's forms, and the search for them.
///
/// A secret's forms are its bytes and its base64 and base64url encodings at each of the three
/// offsets a preceding text can put it at (so `base64("user:" + secret)` holds one of them). A
/// text holds a secret, or a piece of one at least ``window`` bytes long, exactly where its
/// windows are found, ASCII letters compared without case.
///
/// The windows are 8 bytes, each a `UInt64`, and a bit for each in a filter at least 16 times
/// larger than their number: a search costs one bit test per byte of text, and a dictionary
/// lookup only for the few windows whose bit is set, whatever the number of secrets.
struct RedactionTable: Sendable {
    /// The length of a window, and so of the shortest secret and piece of one found.
    static let window = 8

    /// How many forms hold each window.
    private var windows: [UInt64: Int] = [:]
    /// One bit per hash of a window (``slot(_:)``); a clear bit means no secret has that window.
    private var filter = [UInt64](repeating: 0, count: 1 << 10)

    var isEmpty: Bool { windows.isEmpty }

    mutating func add(_ secret: String) {
        let keys = Self.keys(of: secret)
        for key in keys { windows[key, default: 0] += 1 }
        if windows.count * 16 > filter.count * 64 {
            rebuildFilter()
        } else {
            for key in keys { set(key) }
        }
    }

    mutating func remove(_ secret: String) {
        for key in Self.keys(of: secret) {
            if let count = windows[key], count > 1 { windows[key] = count - 1 } else { windows[key] = nil }
        }
        rebuildFilter()
    }

    /// A filter sized for the windows there are now, at 16 bits or more each.
    private mutating func rebuildFilter() {
        var words = 1 << 10
        while words * 64 < windows.count * 16 { words *= 2 }
        filter = [UInt64](repeating: 0, count: words)
        for key in windows.keys { set(key) }
    }

    private mutating func set(_ key: UInt64) {
        let slot = Self.slot(key, words: filter.count)
        filter[slot >> 6] |= 1 << UInt64(slot & 63)
    }

    /// Whether a window may be a secret's: its bit is set.
    @inline(__always) private func mayHold(_ key: UInt64) -> Bool {
        let slot = Self.slot(key, words: filter.count)
        return filter[slot >> 6] & (1 << UInt64(slot & 63)) != 0
    }

    /// A bit of a filter of `words` words (a power of two) for `key`: Fibonacci hashing.
    @inline(__always) private static func slot(_ key: UInt64, words: Int) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 32) & (words * 64 - 1)
    }

    /// The ranges of `view`'s original text that hold a window of a secret.
    func matches(in view: EncodedView) -> [Range<Int>] {
        view.withBytes { bytes in
            guard bytes.count >= Self.window else { return [] }
            var found: [Range<Int>] = []
            var key: UInt64 = 0
            for index in 0..<bytes.count {
                key = key << 8 | UInt64(Self.folded(bytes[index]))
                if index >= Self.window - 1, mayHold(key), windows[key] != nil {
                    found.append(view.originalRange(index + 1 - Self.window..<index + 1))
                }
            }
            return found
        }
    }

    /// The windows of each of the secret's forms.
    static func keys(of secret: String) -> [UInt64] {
        let bytes = Array(secret.utf8)
        var forms = [bytes]
        for offset in 0..<3 {
            forms.append(base64Core(of: bytes, offset: offset, alphabet: standardAlphabet))
            forms.append(base64Core(of: bytes, offset: offset, alphabet: urlAlphabet))
        }
        return forms.flatMap { form -> [UInt64] in
            guard form.count >= window else { return [] }
            var keys: [UInt64] = []
            var key: UInt64 = 0
            for (index, byte) in form.enumerated() {
                key = key << 8 | UInt64(folded(byte))
                if index >= window - 1 { keys.append(key) }
            }
            return keys
        }
    }

    /// The characters of the base64 of `offset` unknown bytes, then `bytes`, then unknown
    /// bytes, that depend on `bytes` alone: the same in every text that encodes the secret at
    /// that offset (RFC 4648 §4, §5).
    static func base64Core(of bytes: [UInt8], offset: Int, alphabet: [UInt8]) -> [UInt8] {
        let padded = [UInt8](repeating: 0, count: offset) + bytes
        var encoded: [UInt8] = []
        var index = 0
        while index < padded.count {
            let chunk = padded[index..<min(index + 3, padded.count)]
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset)) }
            for position in 0..<(chunk.count + 1) {
                encoded.append(alphabet[Int(value >> (18 - 6 * UInt32(position)) & 0x3F)])
            }
            index += 3
        }
        // The first characters mix in the unknown bytes before; the last, the unknown bytes after.
        let leading = [0, 2, 3][offset]
        let remainder = padded.count % 3
        let trailing = remainder == 0 ? 0 : 1
        guard encoded.count > leading + trailing else { return [] }
        return Array(encoded[leading..<(encoded.count - trailing)])
    }

    static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// An ASCII capital as its small letter; any other byte as it is.
    @inline(__always) static func folded(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }
}
