import Foundation

/// The tests' own search for a secret in what feedsync wrote, written apart from the program's
/// redaction so that it can catch what the redaction misses.
///
/// It looks for any 8 consecutive bytes of the secret, in any ASCII case: in the text as it is,
/// after undoing percent-encoding (and `+` as a space), JSON escapes and HTML character
/// references, each up to twice over, and inside every base64 or base64url run, decoded from
/// each of its first four characters.
enum SecretSearch {
    /// Where `secret` (or 8 bytes of it) shows in `text`, one phrase per finding; empty when it does not.
    static func findings(of secret: String, in text: String) -> [String] {
        let pieces = Set(windows(of: Array(secret.utf8)))
        var found: [String] = []
        var seen = Set<[UInt8]>()
        var texts = [("as written", Array(text.utf8))]
        // Undo each encoding, twice over, in any order.
        for _ in 0..<2 {
            texts += texts.flatMap { name, bytes in
                decoders.compactMap { decoder -> (String, [UInt8])? in
                    let decoded = decoder.1(bytes)
                    guard decoded != bytes, seen.insert(decoded).inserted else { return nil }
                    return ("\(name), \(decoder.0)", decoded)
                }
            }
        }
        for (name, bytes) in texts {
            if let at = firstPiece(pieces, in: bytes) {
                found.append("\(name): …\(String(decoding: bytes[at..<at + 8], as: UTF8.self))…")
            }
            for run in base64Runs(in: bytes) {
                for decoded in base64Decodings(of: run) where firstPiece(pieces, in: decoded) != nil {
                    found.append("\(name), base64 \(String(decoding: run.prefix(40), as: UTF8.self))")
                }
            }
        }
        return found
    }

    /// Findings of every secret in every named output.
    static func findings(of secrets: [String], in outputs: [(String, String)]) -> [String] {
        secrets.flatMap { secret in
            outputs.flatMap { name, text in findings(of: secret, in: text).map { "\(name) shows \(secret.prefix(6))…: \($0)" } }
        }
    }

    /// The runs of 8 or more printable bytes in a binary file (as `strings` finds them), one a
    /// line: a stored text is a run of its own, and the search need not read the file's zeros.
    static func printableRuns(of data: Data) -> String {
        var runs: [String] = []
        var run: [UInt8] = []
        for byte in data {
            if byte >= 0x20 && byte != 0x7F {
                run.append(byte)
            } else {
                if run.count >= 8 { runs.append(String(decoding: run, as: UTF8.self)) }
                run.removeAll(keepingCapacity: true)
            }
        }
        if run.count >= 8 { runs.append(String(decoding: run, as: UTF8.self)) }
        return runs.joined(separator: "\n")
    }

    static let decoders: [(String, @Sendable ([UInt8]) -> [UInt8])] = [
        ("percent-decoded", { percentDecoded($0, plusAsSpace: false) }),
        ("form-decoded", { percentDecoded($0, plusAsSpace: true) }),
        ("JSON-unescaped", jsonUnescaped),
        ("HTML-unescaped", htmlUnescaped),
    ]

    /// Each run of 8 bytes, ASCII letters in small case, as one number.
    static func windows(of bytes: [UInt8]) -> [UInt64] {
        var keys: [UInt64] = []
        var key: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            key = key << 8 | UInt64((0x41...0x5A).contains(byte) ? byte | 0x20 : byte)
            if index >= 7 { keys.append(key) }
        }
        return keys
    }

    /// Where the first 8 bytes that are a piece of the secret start in `bytes`.
    static func firstPiece(_ pieces: Set<UInt64>, in bytes: [UInt8]) -> Int? {
        windows(of: bytes).firstIndex(where: pieces.contains)
    }

    static func hexValue(_ bytes: ArraySlice<UInt8>) -> UInt32? {
        UInt32(String(decoding: bytes, as: UTF8.self), radix: 16)
    }

    static func utf8(_ value: UInt32) -> [UInt8]? { Unicode.Scalar(value).map { Array(String($0).utf8) } }

    static func percentDecoded(_ bytes: [UInt8], plusAsSpace: Bool) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count, let value = hexValue(bytes[index + 1...index + 2]) {
                out.append(UInt8(value))
                index += 3
            } else {
                out.append(plusAsSpace && bytes[index] == UInt8(ascii: "+") ? 0x20 : bytes[index])
                index += 1
            }
        }
        return out
    }

    static func jsonUnescaped(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count {
                let next = bytes[index + 1]
                if next == UInt8(ascii: "u"), index + 5 < bytes.count, let value = hexValue(bytes[index + 2...index + 5]), let scalar = utf8(value) {
                    out += scalar
                    index += 6
                    continue
                }
                if [UInt8(ascii: "/"), UInt8(ascii: "\""), UInt8(ascii: "\\")].contains(next) {
                    out.append(next)
                    index += 2
                    continue
                }
            }
            out.append(bytes[index])
            index += 1
        }
        return out
    }

    static func htmlUnescaped(_ bytes: [UInt8]) -> [UInt8] {
        let named: [String: UInt8] = ["quot": 0x22, "apos": 0x27, "lt": 0x3C, "gt": 0x3E, "amp": 0x26]
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "&"), let end = bytes[index..<min(bytes.count, index + 10)].firstIndex(of: UInt8(ascii: ";")) {
                let name = String(decoding: bytes[index + 1..<end], as: UTF8.self)
                var value: [UInt8]?
                if let byte = named[name] {
                    value = [byte]
                } else if name.hasPrefix("#x") || name.hasPrefix("#X") {
                    value = UInt32(name.dropFirst(2), radix: 16).flatMap(utf8)
                } else if name.hasPrefix("#") {
                    value = UInt32(name.dropFirst()).flatMap(utf8)
                }
                if let value {
                    out += value
                    index = end + 1
                    continue
                }
            }
            out.append(bytes[index])
            index += 1
        }
        return out
    }

    /// The runs of 11 or more characters of the base64 and base64url alphabets.
    static func base64Runs(in bytes: [UInt8]) -> [[UInt8]] {
        func isBase64(_ byte: UInt8) -> Bool {
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || [UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "-"), UInt8(ascii: "_")].contains(byte)
        }
        var runs: [[UInt8]] = []
        var start: Int?
        for index in 0...bytes.count {
            if index < bytes.count, isBase64(bytes[index]) {
                if start == nil { start = index }
            } else if let begun = start {
                if index - begun >= 11 { runs.append(Array(bytes[begun..<index])) }
                start = nil
            }
        }
        return runs
    }

    /// The bytes of a run read as base64 from each of its first four characters on.
    static func base64Decodings(of run: [UInt8]) -> [[UInt8]] {
        let standard = run.map { $0 == UInt8(ascii: "-") ? UInt8(ascii: "+") : $0 == UInt8(ascii: "_") ? UInt8(ascii: "/") : $0 }
        return (0..<4).compactMap { skip -> [UInt8]? in
            let body = standard.dropFirst(skip)
            return Data(base64Encoded: Data(body.prefix(body.count / 4 * 4))).map { Array($0) }
        }
    }
}
