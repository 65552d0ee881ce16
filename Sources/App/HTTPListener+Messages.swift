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
        /// The protocol of the request line, `HTTP/1.1` or `HTTP/1.0`: a body made while it is
        /// sent goes chunked to the first, and ends with the connection for the second.
        public var version = "HTTP/1.1"
        /// The head's fields, names lowercased, in order (control characters left as sent).
        public var headers: [(name: String, value: String)] = []
        /// The body (a `POST`'s), at most ``Limits/maxBodyBytes``.
        public var body: [UInt8] = []
        /// The client's address, as `inet_ntop` writes it (`127.0.0.1`, `::1`).
        public var peer: String = ""

        /// The value of the first field named `name` (any case).
        public func header(_ name: String) -> String? {
            let lowered = name.lowercased()
            return headers.first { $0.name == lowered }?.value
        }
    }

    /// A head read: the request it asks (with how long a body follows), or the answer it gets at once.
    enum Parsed {
        case request(Request, bodyLength: Int)
        case answer(Response)
    }

    /// A body made while it is sent, for one too large to hold whole: ``next`` gives the
    /// following piece, `nil` once the body is complete. The listener calls it on its own thread,
    /// only once the socket has taken every byte before, so at most one piece is in memory.
    public struct BodyStream: Sendable {
        public let next: @Sendable () -> [UInt8]?

        public init(next: @escaping @Sendable () -> [UInt8]?) { self.next = next }
    }

    /// An answer: status, content type and body.
    public struct Response: Sendable {
        public var status: Int
        public var contentType = "text/plain; charset=utf-8"
        /// The body in pieces, sent one after the other (a large one is never copied whole).
        public var body: [[UInt8]]
        public var headers: [(String, String)] = []
        /// The rest of the body, made as it is sent, after ``body``; its length is not known
        /// beforehand, so it goes chunked to an HTTP/1.1 client.
        public var stream: BodyStream?
        /// Whether the length is unknown: a streamed body, or a `HEAD` asking about one.
        fileprivate(set) var streamed = false
        /// Whether a streamed body is sent with chunked transfer coding (``finish(_:for:)``).
        fileprivate(set) var chunked = false

        public init(status: Int, contentType: String = "text/plain; charset=utf-8", body: String, headers: [(String, String)] = []) {
            self.init(status: status, contentType: contentType, pieces: [Array(body.utf8)], headers: headers)
        }

        public init(status: Int, contentType: String = "text/plain; charset=utf-8", pieces: [[UInt8]], headers: [(String, String)] = []) {
            self.status = status
            self.contentType = contentType
            self.body = pieces
            self.headers = headers
        }

        /// An answer whose body is made while it is sent: pieces from `stream` until it gives `nil`.
        public init(status: Int, contentType: String, stream: BodyStream, headers: [(String, String)] = []) {
            self.init(status: status, contentType: contentType, pieces: [], headers: headers)
            self.stream = stream
            self.streamed = true
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

    /// The answer to a complete head, from a handler that answers at once (no body is read).
    static func respond(to head: [UInt8], handler: (Request) -> Response) -> Response {
        switch parse(head, maxBodyBytes: 0) {
        case .answer(let response): return response
        case .request(let request, _): return finish(handler(request), for: request)
        }
    }

    /// The response as `request` gets it: a `HEAD` gets the length (unless the body is streamed)
    /// and no body; a streamed body goes chunked to an HTTP/1.1 client, and until the connection
    /// closes to an HTTP/1.0 one, which knows no chunks.
    static func finish(_ response: Response, for request: Request) -> Response {
        var response = response
        if request.method == "HEAD" {
            if !response.streamed { response.headers.append(("Content-Length", "\(response.length)")) }
            response.body = []
            response.stream = nil
        } else if response.streamed {
            response.chunked = request.version != "HTTP/1.0"
        }
        return response
    }

    /// Reads a complete head: its request line and fields. A `POST` is taken only by a listener
    /// that takes bodies (`maxBodyBytes > 0`), with a `Content-Length` within it (more: `413`);
    /// a chunked body is refused (`411`).
    static func parse(_ head: [UInt8], maxBodyBytes: Int) -> Parsed {
        guard let lineEnd = head.firstIndex(of: 0x0A) else { return .answer(Response(status: 400, body: "bad request\n")) }
        var line = head[0..<lineEnd]
        if line.last == 0x0D { line = line.dropLast() }
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0 > 0x20 && $0 < 0x7F } }),
              parts[2].starts(with: Array("HTTP/1.".utf8)), parts[1].first == UInt8(ascii: "/") || parts[1].elementsEqual("*".utf8) else {
            return .answer(Response(status: 400, body: "bad request\n"))
        }
        let method = String(decoding: parts[0], as: UTF8.self)
        let takesBodies = maxBodyBytes > 0
        guard method == "GET" || method == "HEAD" || (takesBodies && method == "POST") else {
            return .answer(Response(status: 405, body: takesBodies ? "only GET, HEAD and POST\n" : "only GET and HEAD\n",
                                    headers: [("Allow", takesBodies ? "GET, HEAD, POST" : "GET, HEAD")]))
        }
        let target = String(decoding: parts[1], as: UTF8.self)
        let path = String(target.prefix { $0 != "?" })
        let query = target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) } ?? ""
        var request = Request(method: method, path: path, query: query)
        request.version = String(decoding: parts[2], as: UTF8.self)
        for field in head[(lineEnd + 1)...].split(separator: 0x0A) {
            var field = field
            if field.last == 0x0D { field = field.dropLast() }
            guard !field.isEmpty else { continue }
            guard let colon = field.firstIndex(of: UInt8(ascii: ":")), colon > field.startIndex else {
                return .answer(Response(status: 400, body: "bad request: a header field without a name\n"))
            }
            let name = String(decoding: field[..<colon], as: UTF8.self).lowercased()
            let value = String(decoding: field[(colon + 1)...], as: UTF8.self).trimmingCharacters(in: .whitespaces)
            request.headers.append((name, value))
        }
        guard takesBodies, method == "POST" else { return .request(request, bodyLength: 0) }
        if request.header("transfer-encoding") != nil {
            return .answer(Response(status: 411, body: "send the body with a Content-Length, not chunked\n"))
        }
        let lengths = request.headers.filter { $0.name == "content-length" }.map(\.value)
        guard lengths.count <= 1 else { return .answer(Response(status: 400, body: "bad request: two Content-Length fields\n")) }
        guard let text = lengths.first else { return .request(request, bodyLength: 0) }
        guard text.count <= 12, text.allSatisfy(\.isASCII), let length = Int(text), length >= 0 else {
            return .answer(Response(status: 400, body: "bad request: Content-Length is not a number\n"))
        }
        guard length <= maxBodyBytes else { return .answer(Response(status: 413, body: "request body over \(maxBodyBytes) bytes\n")) }
        return .request(request, bodyLength: length)
    }

    static func encode(_ response: Response) -> [[UInt8]] {
        let reasons = [200: "OK", 304: "Not Modified", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
                       405: "Method Not Allowed", 408: "Request Timeout", 411: "Length Required", 413: "Content Too Large",
                       431: "Request Header Fields Too Large", 500: "Internal Server Error", 503: "Service Unavailable"]
        var head = "HTTP/1.1 \(response.status) \(reasons[response.status] ?? "Status")\r\n"
        head += "Content-Type: \(response.contentType)\r\n"
        if response.chunked {
            head += "Transfer-Encoding: chunked\r\n"
        } else if !response.streamed, !response.headers.contains(where: { $0.0 == "Content-Length" }) {
            head += "Content-Length: \(response.length)\r\n"
        }
        for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
        head += "Connection: close\r\n\r\n"
        return [Array(head.utf8)] + (response.chunked ? response.body.flatMap { frame($0, chunked: true) } : response.body)
    }

    /// One piece of a streamed body as it goes on the wire: framed as a chunk (RFC 9112 §7.1)
    /// when `chunked`, and the last chunk after the end (`nil`); `[]` for an empty piece (a chunk
    /// of none would end the body) and after the end of a body that is not chunked.
    static func frame(_ piece: [UInt8]?, chunked: Bool) -> [[UInt8]] {
        if let piece, piece.isEmpty { return [] }
        guard chunked else { return piece.map { [$0] } ?? [] }
        guard let piece else { return [Array("0\r\n\r\n".utf8)] }
        return [Array((String(piece.count, radix: 16) + "\r\n").utf8), piece, Array("\r\n".utf8)]
    }
}
