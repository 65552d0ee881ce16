import Foundation

/// Builds text in the exposition format as bytes, escaping as it requires.
///
/// A scrape of 10,000 feeds is some 300,000 lines, so numbers and labels are written straight
/// into one byte buffer rather than through string interpolation.
struct Exposition {
    var bytes: [UInt8] = []

    init(capacity: Int = 4096) { bytes.reserveCapacity(capacity) }

    var text: String { String(decoding: bytes, as: UTF8.self) }

    mutating func family(_ name: String, _ type: String, _ help: String) {
        bytes += "# HELP \(name) \(Self.escapeHelp(help))\n# TYPE \(name) \(type)\n".utf8
    }

    mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Double) {
        bytes += name.utf8
        if !labels.isEmpty {
            bytes.append(UInt8(ascii: "{"))
            for (index, (label, labelValue)) in labels.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes += label.utf8
                bytes += #"=""#.utf8
                appendEscaped(labelValue)
                bytes.append(UInt8(ascii: "\""))
            }
            bytes.append(UInt8(ascii: "}"))
        }
        bytes.append(UInt8(ascii: " "))
        append(value)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// A value as ``number(_:)`` spells it, integers without going through a string.
    mutating func append(_ value: Double) {
        if value == value.rounded(), abs(value) < 1e15 { return append(Int64(value)) }
        bytes += Self.number(value).utf8
    }

    mutating func append(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            bytes += buffer[(20 - count)...]
        }
    }

    mutating func appendEscaped(_ value: String) {
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): bytes += #"\\"#.utf8
            case UInt8(ascii: "\""): bytes += #"\""#.utf8
            case UInt8(ascii: "\n"): bytes += #"\n"#.utf8
            default: bytes.append(byte)
            }
        }
    }

    /// A sample value: integers without a fraction, `+Inf`, `-Inf`, `NaN` as the format spells them.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// A label value: backslash, double quote and line feed escaped (the format's three).
    static func escapeLabel(_ value: String) -> String {
        var exposition = Exposition()
        exposition.appendEscaped(value)
        return exposition.text
    }

    /// A HELP text: backslash and line feed escaped.
    static func escapeHelp(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }
}
