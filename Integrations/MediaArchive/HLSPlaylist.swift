import Foundation

/// An HLS playlist (RFC 8216) as far as the archive reads one: a multivariant playlist's
/// variants with their bandwidth and resolution (§4.3.4.2), or a media playlist's segments
/// and its initialization section (§4.3.2.5).
struct HLSPlaylist: Equatable {
    struct Variant: Equatable {
        var url: URL
        var bandwidth: Int
        var height: Int
    }

    var variants: [Variant] = []
    var segments: [URL] = []
    /// The `EXT-X-MAP` initialization section, which comes before every segment's bytes.
    var map: URL?

    /// Whether `url` names a playlist by its extension.
    static func isPlaylist(_ url: URL) -> Bool { url.pathExtension.lowercased() == "m3u8" }

    /// Reads `text`, resolving every URI against `base`.
    ///
    /// - Throws: ``PlaylistError`` for text that is not a playlist (no `#EXTM3U` first), or a
    ///   URI that is not http(s).
    init(_ text: String, base: URL) throws {
        var lines = text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        guard lines.first?.hasPrefix("#EXTM3U") == true else { throw PlaylistError("the playlist does not begin with #EXTM3U") }
        lines.removeFirst()
        var pendingVariant: (bandwidth: Int, height: Int)?
        for line in lines where !line.isEmpty {
            if line.hasPrefix("#EXT-X-STREAM-INF:") {
                let attributes = Self.attributes(line.dropFirst("#EXT-X-STREAM-INF:".count))
                let height = attributes["RESOLUTION"]?.split(separator: "x").last.flatMap { Int($0) } ?? 0
                pendingVariant = (Int(attributes["BANDWIDTH"] ?? "") ?? 0, height)
            } else if line.hasPrefix("#EXT-X-MAP:") {
                map = try Self.resolve(Self.attributes(line.dropFirst("#EXT-X-MAP:".count))["URI"], base)
            } else if line.hasPrefix("#") {
                continue
            } else if let variant = pendingVariant {
                variants.append(Variant(url: try Self.resolve(line, base), bandwidth: variant.bandwidth, height: variant.height))
                pendingVariant = nil
            } else {
                segments.append(try Self.resolve(line, base))
            }
        }
    }

    /// The variant of the largest picture, then of the highest bandwidth.
    var best: Variant? { variants.max { ($0.height, $0.bandwidth) < ($1.height, $1.bandwidth) } }

    private static func resolve(_ text: String?, _ base: URL) throws -> URL {
        guard let text, let url = URL(string: text, relativeTo: base)?.absoluteURL,
              let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw PlaylistError("the playlist lists \(text.map { "\"\($0.prefix(80))\"" } ?? "an entry without a URI"), which is not an http(s) address")
        }
        return url
    }

    /// `NAME=value,NAME="quoted, value"` (§4.2).
    static func attributes(_ text: Substring) -> [String: String] {
        var result: [String: String] = [:]
        var rest = text[...]
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "=") else { break }
            let name = rest[..<equals].trimmingCharacters(in: .whitespaces)
            rest = rest[rest.index(after: equals)...]
            var value: Substring
            if rest.first == "\"" {
                let body = rest.dropFirst()
                let close = body.firstIndex(of: "\"") ?? body.endIndex
                value = body[..<close]
                rest = close < body.endIndex ? body[body.index(after: close)...] : ""
            } else {
                let comma = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<comma]
                rest = rest[comma...]
            }
            if rest.first == "," { rest = rest.dropFirst() }
            result[name] = String(value)
        }
        return result
    }
}

/// A playlist the archive refuses: one sentence.
struct PlaylistError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
