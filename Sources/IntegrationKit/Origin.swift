import Foundation

/// Scheme, host and port: what must match for a URL to be "the same server" (RFC 6454).
///
/// Tokens and redirects stay within one origin, so a hostile server cannot send credentials
/// to another host, another port, or from https down to http.
public struct Origin: Hashable, Sendable, CustomStringConvertible {
    public var scheme: String
    public var host: String
    public var port: Int

    /// The origin of an absolute http(s) URL; `nil` for anything else.
    public init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host?.lowercased(), !host.isEmpty else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = url.port ?? (scheme == "https" ? 443 : 80)
    }

    public var description: String {
        let defaultPort = scheme == "https" ? 443 : 80
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(shownHost)" + (port == defaultPort ? "" : ":\(port)")
    }

    /// The key under which requests to this origin take turns at the ``Core/HostGate``.
    public var gateKey: String { "\(host):\(port)" }
}
