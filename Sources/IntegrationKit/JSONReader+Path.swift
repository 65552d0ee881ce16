import Foundation

extension JSONReader {
    /// The string at `path`, a list of keys through nested objects, in a whole body of JSON:
    /// `nil` when the body is not JSON (or nests deeper than ``maxDepth``), or the path does
    /// not lead to a string.
    ///
    /// For the one field a caller wants of a small answer (an error's message, an announced
    /// URL), without a DTO. Of two equal keys the last wins.
    ///
    ///     JSONReader.string(at: ["urls", "streaming_api"], in: response.body)   // "wss://…"
    public static func string(at path: [String], in body: Data) -> String? {
        body.withUnsafeBytes { raw in
            var reader = JSONReader(raw.bindMemory(to: UInt8.self))
            guard let found = try? reader.string(at: path[...]), reader.isAtEnd else { return nil }
            return found
        }
    }

    /// The string at `path` in the value that comes next, consuming the whole value.
    private mutating func string(at path: ArraySlice<String>) throws -> String? {
        guard let key = path.first else {
            guard try peek() == UInt8(ascii: "\"") else {
                try skipValue()
                return nil
            }
            return try readStringSyntax()
        }
        guard try peek() == UInt8(ascii: "{") else {
            try skipValue()
            return nil
        }
        var found: String?
        try readObject { reader, name in
            if name == key {
                found = try reader.string(at: path.dropFirst())
            } else {
                try reader.skipValue()
            }
        }
        return found
    }
}
