/// Which status codes a close frame may carry, as RFC 6455 §7.4 and IANA's "WebSocket Close
/// Code Number Registry" define them.
///
/// | codes | on the wire | why |
/// |---|---|---|
/// | 0–999 | no | "not used" (§7.4.2) |
/// | 1000–1003 | yes | defined (§7.4.1): normal, going away, protocol error, unacceptable data |
/// | 1004 | no | reserved, meaning not defined (§7.4.1) |
/// | 1005, 1006 | no | stand for "no code received" and "closed without a close frame"; "MUST NOT be set as a status code in a Close control frame" (§7.4.1) |
/// | 1007–1011 | yes | defined (§7.4.1): invalid data, policy, too big, missing extension, server error |
/// | 1012–1014 | yes | registered by IANA after the RFC: service restart, try again later, bad gateway |
/// | 1015 | no | stands for a failed TLS handshake; must not be sent (§7.4.1) |
/// | 1016–2999 | no | reserved for this protocol and its extensions, not registered (§7.4.2) |
/// | 3000–4999 | yes | for libraries, frameworks and applications (§7.4.2) |
/// | 5000– | no | outside every range §7.4.2 defines |
///
/// 1012–1014 are accepted because the registry lists them and servers send them (a restart
/// is 1012); a client that refused them would treat an orderly restart as a protocol error.
public enum WebSocketCloseCode {
    /// Why `code` may not appear in a close frame, or `nil` when it may.
    public static func problem(_ code: UInt16) -> String? {
        switch code {
        case 0...999: "is not used (RFC 6455 §7.4.2)"
        case 1004: "is reserved (RFC 6455 §7.4.1)"
        case 1005, 1006, 1015: "stands for a condition and must never be sent in a close frame (RFC 6455 §7.4.1)"
        case 1000...1003, 1007...1014, 3000...4999: nil
        case 1016...2999: "is reserved and not registered (RFC 6455 §7.4.2)"
        default: "is outside the ranges of close codes (RFC 6455 §7.4.2)"
        }
    }
}
