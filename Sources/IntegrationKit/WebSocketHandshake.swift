import Core
import Foundation

/// The client's side of the WebSocket opening handshake (RFC 6455 §4.1): the upgrade request,
/// and the checks of the server's answer.
///
/// No extension is offered (so no compression), no subprotocol, and no redirect is followed:
/// a `3xx` answer ends the attempt, whatever origin it points to.
public struct WebSocketHandshake: Sendable {
    /// The GUID every server appends to the key (§1.3).
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
    /// The most bytes the answer's head may take.
    public static let maxHeadBytes = 16 * 1024

    /// `Sec-WebSocket-Key`: 16 random bytes in base64, fresh for each connection.
    public let key: String

    /// A handshake with a fresh random key, or `key` (a test of the RFC's example).
    public init(key: String? = nil) {
        var random = SystemRandomNumberGenerator()
        self.key = key ?? Data((0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }).base64EncodedString()
    }

    /// The `Sec-WebSocket-Accept` a server must answer `key` with: base64 of SHA-1(key + GUID).
    public static func accept(forKey key: String) -> String {
        Data(SHA1.digest(Array((key + guid).utf8))).base64EncodedString()
    }

    /// The upgrade request for `url` (`ws://` or `wss://`), with `headers` added.
    public func request(for url: URL, headers: [String: String] = [:]) -> [UInt8] {
        let target = HTTPRequest(url: url).target
        let scheme = url.scheme?.lowercased() ?? "ws"
        let host = url.host.map { $0.contains(":") ? "[\($0)]" : $0 } ?? ""
        let defaultPort = scheme == "wss" || scheme == "https" ? 443 : 80
        var lines = ["GET \(target) HTTP/1.1",
                     "Host: \(host)" + (url.port.map { $0 == defaultPort ? "" : ":\($0)" } ?? ""),
                     "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: \(key)", "Sec-WebSocket-Version: 13",
                     "User-Agent: feedsync"]
        lines += headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    /// Checks the server's answer head (status line and fields, without the blank line).
    ///
    /// - Throws: ``Core/ServiceError`` — `.contractViolation` for an answer that is not a valid
    ///   upgrade (a redirect, a wrong or missing `Sec-WebSocket-Accept`, an extension that was
    ///   not offered); `.unauthorized`, `.rateLimited`, `.invalidRequest` or `.unavailable` for
    ///   an HTTP error status, as for any other request.
    public func check(_ head: String, operation: String) throws {
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw ServiceError(.contractViolation, operation, "the server did not answer with HTTP (\(Terminal.safe(statusLine, limit: 80)))")
        }
        var fields: [String: String] = [:]
        for line in lines.prefix(200) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        if (300..<400).contains(status) {
            let location = Terminal.safe(fields["location"] ?? "nowhere", limit: 200)
            throw ServiceError(.contractViolation, operation, "the server redirects (\(status)) to \(location); a stream follows no redirect")
        }
        guard status == 101 else {
            let response = HTTPResponse(status: status, headers: fields, body: Data())
            if let error = HTTPStatus.error(for: response, operation, detail: "") { throw error }
            throw ServiceError(.contractViolation, operation, "the server answered \(status), not 101, to the WebSocket upgrade")
        }
        guard fields["upgrade"]?.lowercased() == "websocket",
              fields["connection"]?.lowercased().split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == "upgrade" }) == true else {
            throw ServiceError(.contractViolation, operation, "the server's 101 answer does not upgrade to websocket")
        }
        guard fields["sec-websocket-accept"] == Self.accept(forKey: key) else {
            throw ServiceError(.contractViolation, operation, "the server's Sec-WebSocket-Accept does not match the key sent")
        }
        if let extensions = fields["sec-websocket-extensions"], !extensions.isEmpty {
            throw ServiceError(.contractViolation, operation, "the server turned on an extension that was not offered (\(Terminal.safe(extensions, limit: 80)))")
        }
    }
}
