import Core
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where the metrics listener binds: an IP literal and a port, as `"127.0.0.1:9464"` or
/// `"[::1]:9464"` (`localhost` stands for `127.0.0.1`).
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// The address as written in the config, normalised (`localhost` becomes `127.0.0.1`).
    public var host: String
    public var port: UInt16
    public var isIPv6: Bool

    /// Parses `text`.
    /// - Throws: a sentence saying what is wrong (as a `String`), for the config's error.
    public init(_ text: String) throws(ListenAddressError) {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw ListenAddressError("\"\(Terminal.safe(text, limit: 80))\" is not an address and port: write an IPv6 literal as [::1]:9464")
            }
            hostPart = text[text.index(after: text.startIndex)..<close]
            portPart = text[text.index(close, offsetBy: 2)...]
            isIPv6 = true
        } else {
            guard let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon else {
                throw ListenAddressError("\"\(Terminal.safe(text, limit: 80))\" is not an address and port such as 127.0.0.1:9464 or [::1]:9464")
            }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            isIPv6 = false
        }
        guard let port = UInt16(portPart), port > 0, portPart.allSatisfy(\.isASCII) else {
            throw ListenAddressError("\"\(Terminal.safe(text, limit: 80))\" has no port between 1 and 65535")
        }
        let host = hostPart == "localhost" ? "127.0.0.1" : String(hostPart)
        var probe = in6_addr()
        guard inet_pton(isIPv6 ? AF_INET6 : AF_INET, host, &probe) == 1 else {
            throw ListenAddressError("\"\(Terminal.safe(String(hostPart), limit: 80))\" is not an IP address; the listener takes an IPv4 or IPv6 literal (or localhost)")
        }
        self.host = host
        self.port = port
    }

    /// The same address on another port (0: the kernel picks a free one).
    public func withPort(_ port: UInt16) -> ListenAddress {
        var copy = self
        copy.port = port
        return copy
    }

    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Whether only this machine can reach it.
    public var isLoopback: Bool { isIPv6 ? host == "::1" : host.hasPrefix("127.") }
}

/// Why a listen address cannot be used, in one sentence.
public struct ListenAddressError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
