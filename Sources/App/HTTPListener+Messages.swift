import Foundation

/// The listener's side of HTTP/1.1: what a client asked for, what it is answered, and the
/// bytes of both on the wire.
extension HTTPListener {
    /// What a client asked for.
    public struct Request: Sendable {
        public var method: String
        /// The path, without the query.
        public var path: String
        /// The query, still percent-encoded, without the `?`.
        public var query: String
    }

    /// An answer: status, content type and body.
    public struct Response: Sendable {
        public var status: Int
        public var contentType = "text/plain; charset=utf-8"
        /// The body in pieces, sent one after the other (a large one is never copied whole).
        public var body: [[UInt8]]
        public var headers: [(String, String)] = []

        public init(status: Int, contentType: String = "text/plain; charset=utf-8", body: String, headers: [(String, String)] = []) {
            self.init(status: status, contentType: contentType, pieces: [Array(body.utf8)], headers: headers)
        }

        public init(status: Int, contentType: String = "text/plain; charset=utf-8", pieces: [[UInt8]], headers: [(String, String)] = []) {
            self.status = status
            self.contentType = contentType
            self.body = pieces
            self.headers = headers
        }

        var length: Int { body.reduce(0) { $0 + $1.count } }
    }

    /// Where the head ends (after its blank line), if it has.
    static func endOfHead(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 2 else { return nil }
        for index in 1..<bytes.count where bytes[index] == 0x0A {
            if bytes[index - 1] == 0x0A { return index + 1 }
            if index >= 3, bytes[index - 1] == 0x0D, bytes[index - 2] == 0x0A { return index + 1 }
        }
        return nil
    }

    /// The answer to a complete head.
    static func respond(to head: [UInt8], handler: (Request) -> Response) -> Response {
        guard let lineEnd = head.firstIndex(of: 0x0A) else { return Response(status: 400, body: "bad request\n") }
        var line = head[0..<lineEnd]
        if line.last == 0x0D { line = line.dropLast() }
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0 > 0x20 && $0 < 0x7F } }),
              parts[2].starts(with: Array("HTTP/1.".utf8)), parts[1].first == UInt8(ascii: "/") || parts[1].elementsEqual("*".utf8) else {
            return Response(status: 400, body: "bad request\n")
        }
        let method = String(decoding: parts[0], as: UTF8.self)
        guard method == "GET" || method == "HEAD" else {
            return Response(status: 405, body: "only GET and HEAD\n", headers: [("Allow", "GET, HEAD")])
        }
        let target = String(decoding: parts[1], as: UTF8.self)
        let path = String(target.prefix { $0 != "?" })
        let query = target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) } ?? ""
        var response = handler(Request(method: method, path: path, query: query))
        if method == "HEAD" { response.headers.append(("Content-Length", "\(response.length)")); response.body = [] }
        return response
    }

    static func encode(_ response: Response) -> [[UInt8]] {
        let reasons = [200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout",
                       431: "Request Header Fields Too Large", 503: "Service Unavailable"]
        var head = "HTTP/1.1 \(response.status) \(reasons[response.status] ?? "Status")\r\n"
        head += "Content-Type: \(response.contentType)\r\n"
        if !response.headers.contains(where: { $0.0 == "Content-Length" }) { head += "Content-Length: \(response.length)\r\n" }
        for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
        head += "Connection: close\r\n\r\n"
        return [Array(head.utf8)] + response.body
    }
}
