/// What a WebSocket connection delivers once frames are put back together (§5.4).
public enum WebSocketMessage: Equatable, Sendable {
    case text(String)
    case binary([UInt8])
    case ping([UInt8])
    case pong([UInt8])
    /// The peer closes: its status code (`nil` when it sent none; always one a close frame may
    /// carry, see ``WebSocketCloseCode``) and reason.
    case close(code: UInt16?, reason: String)
}

/// Reads what a server sends, byte by byte as it arrives, into messages: frames parsed,
/// fragments joined, every rule of RFC 6455 §5 that a client must check enforced, and no
/// message longer than the cap held.
public struct WebSocketReader: Sendable {
    /// Why the server's bytes were refused, with the close code the client answers with.
    public struct Failure: Error, Equatable, Sendable {
        /// 1002 protocol error, 1007 invalid payload data, 1009 message too big (§7.4.1).
        public var code: UInt16
        public var reason: String
    }

    /// The longest message, fragments joined; a longer one fails with 1009.
    public let maxMessageBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0
    /// The fragmented message being joined: its opcode and bytes so far.
    private var fragments: (opcode: WebSocketOpcode, bytes: [UInt8])?

    /// A reader for a new connection, with a message cap (1 MiB by default).
    public init(maxMessageBytes: Int = 1 << 20) { self.maxMessageBytes = maxMessageBytes }

    /// Takes the next bytes from the server and returns every message they complete.
    ///
    /// - Throws: ``Failure`` on the first rule broken; the connection is then unusable.
    public mutating func feed(_ bytes: some Collection<UInt8>) throws(Failure) -> [WebSocketMessage] {
        buffer.append(contentsOf: bytes)
        var messages: [WebSocketMessage] = []
        while let frame = try nextFrame() {
            if let message = try assemble(frame) { messages.append(message) }
        }
        if start > 0 && start * 2 >= buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
        return messages
    }

    /// The next whole frame in the buffer, or `nil` until more bytes arrive.
    private mutating func nextFrame() throws(Failure) -> WebSocketFrame? {
        let available = buffer.count - start
        guard available >= 2 else { return nil }
        let first = buffer[start], second = buffer[start + 1]
        guard first & 0x70 == 0 else { throw Failure(code: 1002, reason: "the server set a reserved bit (no extension was negotiated)") }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
            throw Failure(code: 1002, reason: "the server sent a frame with the reserved opcode \(first & 0x0F)")
        }
        guard second & 0x80 == 0 else { throw Failure(code: 1002, reason: "the server sent a masked frame, which a server must never do") }
        var length = UInt64(second & 0x7F)
        var header = 2
        if length == 126 {
            guard available >= 4 else { return nil }
            length = UInt64(buffer[start + 2]) << 8 | UInt64(buffer[start + 3])
            header = 4
        } else if length == 127 {
            guard available >= 10 else { return nil }
            length = (0..<8).reduce(0) { $0 << 8 | UInt64(buffer[start + 2 + $1]) }
            header = 10
            guard length >> 63 == 0 else { throw Failure(code: 1002, reason: "the server sent a frame length with its top bit set") }
        }
        let fin = first & 0x80 != 0
        if opcode.isControl {
            guard fin else { throw Failure(code: 1002, reason: "the server fragmented a control frame") }
            guard length <= 125 else { throw Failure(code: 1002, reason: "the server sent a control frame longer than 125 bytes") }
        }
        let joined = UInt64(fragments?.bytes.count ?? 0)
        guard opcode.isControl || length + joined <= UInt64(maxMessageBytes) else {
            throw Failure(code: 1009, reason: "the server sent a message longer than \(maxMessageBytes) bytes")
        }
        guard available - header >= Int(length) else { return nil }
        let payload = Array(buffer[(start + header)..<(start + header + Int(length))])
        start += header + Int(length)
        return WebSocketFrame(fin: fin, opcode, payload)
    }

    /// The message a frame completes, if it completes one.
    private mutating func assemble(_ frame: WebSocketFrame) throws(Failure) -> WebSocketMessage? {
        switch frame.opcode {
        case .ping: return .ping(frame.payload)
        case .pong: return .pong(frame.payload)
        case .close:
            guard frame.payload.count != 1 else { throw Failure(code: 1002, reason: "the server sent a close frame of one byte") }
            guard frame.payload.count >= 2 else { return .close(code: nil, reason: "") }
            let code = UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1])
            // An invalid code is a protocol error, answered with 1002, never echoed (§7.4, §5.5.1).
            if let problem = WebSocketCloseCode.problem(code) {
                throw Failure(code: 1002, reason: "the server sent the close code \(code), which \(problem)")
            }
            guard let reason = String(validating: frame.payload[2...], as: UTF8.self) else {
                throw Failure(code: 1007, reason: "the server's close reason is not UTF-8")
            }
            return .close(code: code, reason: reason)
        case .continuation:
            guard var joined = fragments else { throw Failure(code: 1002, reason: "the server sent a continuation frame with no message to continue") }
            joined.bytes += frame.payload
            guard frame.fin else {
                fragments = joined
                return nil
            }
            fragments = nil
            return try message(joined.opcode, joined.bytes)
        case .text, .binary:
            guard fragments == nil else { throw Failure(code: 1002, reason: "the server began a message before finishing the one it fragmented") }
            guard frame.fin else {
                fragments = (frame.opcode, frame.payload)
                return nil
            }
            return try message(frame.opcode, frame.payload)
        }
    }

    private func message(_ opcode: WebSocketOpcode, _ bytes: [UInt8]) throws(Failure) -> WebSocketMessage {
        guard opcode == .text else { return .binary(bytes) }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw Failure(code: 1007, reason: "the server sent a text message that is not UTF-8") }
        return .text(text)
    }
}
