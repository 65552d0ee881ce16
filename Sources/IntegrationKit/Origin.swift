import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Scheme, host and port: what must match for a URL to be "the same server" (RFC 6454 §4, §5).
///
/// Tokens and redirects stay within one origin, so a hostile server cannot send credentials
/// to another host, another port, or from https down to http. Every place a credential may
/// travel asks ``admits(_:subdomains:)``, the one comparison:
/// - the scheme is `http` or `https`, compared without case (a `ws(s)://` URL that is to carry
///   a credential is compared in its `http(s)://` form);
/// - the host is compared without case, as Foundation's URL parser gives it: an
///   internationalized name as its `xn--` form, percent-escapes undone, an IPv6 address
///   without brackets in its shortest form (`[0:0::1]` is `[::1]`). A trailing dot makes
///   another host (`example.social.` is not `example.social`: a resolver may read them
///   differently), and so does any other spelling of an IPv4 address (`2130706433`, `127.1`);
/// - the port is the URL's, or the scheme's default (80, 443) when it names none, so
///   `https://a` is `https://a:443` and `http://a` is `http://a:80`.
public struct Origin: Hashable, Sendable, CustomStringConvertible {
    /// `http` or `https`.
    public var scheme: String
    /// Lower-case, without brackets.
    public var host: String
    public var port: Int

    /// The origin of an absolute http(s) URL; `nil` for anything else.
    public init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              var host = url.host?.lowercased(), !host.isEmpty else { return nil }
        // Anything the parser took for an IPv6 address but inet_pton does not is compared as written.
        if host.contains(":"), let canonical = Self.canonicalIPv6(host) { host = canonical }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    /// Whether a credential meant for this origin may go to `url`: `url` has this origin.
    ///
    /// - Parameter subdomains: whether a host under this one (`streaming.example.social` for
    ///   `example.social`) is admitted too, on the same scheme and port. Only for a name:
    ///   an IP address has no subdomains.
    public func admits(_ url: URL, subdomains: Bool = false) -> Bool {
        guard let other = Origin(url) else { return false }
        if other == self { return true }
        guard subdomains, other.scheme == scheme, other.port == port, !isAddress else { return false }
        return other.host.hasSuffix("." + host)
    }

    /// Whether the host is an IP address rather than a name.
    public var isAddress: Bool {
        host.contains(":") || host.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
    }

    public var description: String {
        let defaultPort = scheme == "https" ? 443 : 80
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(shownHost)" + (port == defaultPort ? "" : ":\(port)")
    }

    /// The key under which requests to this origin take turns at the ``Core/HostGate``.
    public var gateKey: String { "\(host):\(port)" }

    /// An IPv6 address (with a zone after `%`, kept as it is) in RFC 5952's form; `nil` when it is not one.
    private static func canonicalIPv6(_ text: String) -> String? {
        let parts = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
        var address = in6_addr()
        guard inet_pton(AF_INET6, String(parts[0]), &address) == 1 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        let canonical = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return parts.count == 2 ? canonical + "%" + parts[1] : canonical
    }
}
