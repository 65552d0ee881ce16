/// The frame opcodes of RFC 6455 §5.2; the others (3–7, 0xB–0xF) are reserved and refused.
public enum WebSocketOpcode: UInt8, Sendable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    /// Close, ping and pong: at most 125 bytes, never fragmented (§5.5).
    public var isControl: Bool { rawValue & 0x8 != 0 }
}

/// One WebSocket frame (RFC 6455 §5.2), as sent or received, with its payload unmasked.
public struct WebSocketFrame: Equatable, Sendable {
    public var fin: Bool
    public var opcode: WebSocketOpcode
    public var payload: [UInt8]

    /// A frame; `fin` false for every fragment of a message but the last.
    public init(fin: Bool = true, _ opcode: WebSocketOpcode, _ payload: [UInt8] = []) {
        self.fin = fin
        self.opcode = opcode
        self.payload = payload
    }

    /// A close frame: the status code (§7.4) in network order, then the reason in UTF-8.
    public static func close(_ code: UInt16, reason: String = "") -> WebSocketFrame {
        WebSocketFrame(.close, [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8.prefix(123)))
    }

    /// The frame on the wire. A client masks every frame it sends (§5.3) with a fresh
    /// `mask`; a server sends none (`nil`).
    public func encoded(mask: [UInt8]?) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode.rawValue]
        bytes.reserveCapacity(payload.count + 14)
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        switch payload.count {
        case 0...125: bytes.append(maskBit | UInt8(payload.count))
        case 126...0xFFFF: bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default:
            bytes.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: UInt64(payload.count) >> UInt64(shift))) }
        }
        guard let mask, mask.count == 4 else { return bytes + payload }
        bytes += mask
        for (index, byte) in payload.enumerated() { bytes.append(byte ^ mask[index & 3]) }
        return bytes
    }
}
