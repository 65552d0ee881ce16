import Foundation

/// The fields of a query or an `application/x-www-form-urlencoded` body, in order: a name may
/// repeat (`i=…&i=…`). Bounded: at most ``limit`` fields, each name and value percent-decoded
/// (`+` a space); a field that does not decode is refused.
struct FormFields {
    static let limit = 1_000

    private(set) var fields: [(name: String, value: String)] = []

    /// - Returns: `nil` when the text holds more than ``limit`` fields or a field that is not
    ///   valid percent-encoded UTF-8.
    init?(_ text: String) {
        guard !text.isEmpty else { return }
        let pairs = text.split(separator: "&", omittingEmptySubsequences: true)
        guard pairs.count <= Self.limit else { return nil }
        for pair in pairs {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]), let value = Self.decode(parts.count > 1 ? parts[1] : "") else { return nil }
            fields.append((name, value))
        }
    }

    init() {}

    /// Fields given as they are (already decoded).
    init(_ fields: [(name: String, value: String)]) { self.fields = fields }

    /// The first value of `name`.
    subscript(_ name: String) -> String? { fields.first { $0.name == name }?.value }

    /// Every value of `name`, in order.
    func all(_ name: String) -> [String] { fields.filter { $0.name == name }.map(\.value) }

    /// These fields followed by `other`'s.
    func merged(with other: FormFields) -> FormFields {
        var merged = self
        merged.fields += other.fields
        return merged
    }

    private static func decode(_ text: Substring) -> String? {
        String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
