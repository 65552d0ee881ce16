import Core
import Foundation
import IntegrationKit

/// What a web feed's requests carry besides the standard fields: the feed's `"userAgent"`, its
/// `"headers"`, and its `"auth"` credentials (``WebFeedAuth``).
///
///     "posts": {"integration": "webfeed", "url": "https://intranet.example/feed.xml",
///               "userAgent": "Mozilla/5.0 (feedsync)", "headers": {"X-Team": "news"},
///               "auth": {"bearerFile": "secrets/intranet-token"}}
///
/// The user agent goes with every request; the headers and the credentials go only to the
/// configured URL's origin (``IntegrationKit/Origin/admits(_:subdomains:)``), never across a
/// redirect or a discovered link to another one.
struct WebFeedHeaders: Sendable {
    /// The origin of the configured URL: where the headers and credentials may go.
    let home: Origin?
    let userAgent: String
    let extra: [String: String]
    let auth: WebFeedAuth?

    /// At most this many `"headers"`.
    static let maxHeaders = 20
    /// The longest header value, in bytes.
    static let maxValueBytes = 1_000
    /// Fields feedsync itself sets or that frame the message: not taken from the config.
    static let reserved: Set<String> = ["host", "content-length", "transfer-encoding", "connection", "te", "upgrade",
                                        "if-none-match", "if-modified-since", "accept-encoding", "expect"]
    /// Fields that carry credentials: only through `"auth"`.
    static let credentialFields: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// The keys ``init(_:url:defaultUserAgent:)`` reads, as the descriptor lists them.
    static let keys = [
        ConfigKey("userAgent", .string, default: "feedsync/<version>", "the User-Agent sent for this feed, to every server it leads to"),
        ConfigKey("headers", .object, "more request headers, name to value, sent only to the feed's own origin; not Authorization or Cookie"),
        ConfigKey("auth", .object, #"credentials for a private feed: {"basic": {"user", "passwordEnv"|"passwordFile"}} or {"bearerEnv"|"bearerFile"}"#),
    ]

    init(home: Origin?, userAgent: String, extra: [String: String] = [:], auth: WebFeedAuth? = nil) {
        self.home = home
        self.userAgent = userAgent
        self.extra = extra
        self.auth = auth
    }

    /// Reads `userAgent`, `headers` and `auth` of a web feed at `url`.
    ///
    /// - Throws: ``Core/ConfigError`` naming the key path of a header name that is not a token,
    ///   a value with a control character, `Authorization` or `Cookie` outside `"auth"`, or a
    ///   bad `auth` (see ``WebFeedAuth/read(_:url:)``).
    init(_ config: ConfigSection, url: URL, defaultUserAgent: String) throws {
        var userAgent = defaultUserAgent
        if let given = try config.string("userAgent") {
            guard given.utf8.count <= Self.maxValueBytes, HeaderValue.isValid(given, allowsSpace: true) else {
                throw config.error("userAgent", "must be 1 to \(Self.maxValueBytes) bytes of visible ASCII with inner spaces, "
                                   + "without control characters")
            }
            userAgent = given
        }
        var extra: [String: String] = [:]
        if let headers = try config.section("headers") {
            extra = try Self.read(headers)
        }
        let auth = try WebFeedAuth.read(config, url: url)
        self.init(home: Origin(url), userAgent: userAgent, extra: extra, auth: auth)
    }

    /// The `"headers"` object, checked name by name.
    private static func read(_ section: ConfigSection) throws -> [String: String] {
        let names = section.keys
        guard names.count <= maxHeaders else { throw section.error(nil, "holds \(names.count) headers; at most \(maxHeaders) are sent") }
        var headers: [String: String] = [:]
        for name in names {
            let lower = name.lowercased()
            guard !name.isEmpty, name.utf8.count <= 100, name.utf8.allSatisfy(isTokenByte) else {
                throw section.error(Terminal.safe(name, limit: 100), "is not a header name (letters, digits and !#$%&'*+-.^_`|~ only)")
            }
            if credentialFields.contains(lower) {
                throw section.error(name, "credentials are not taken from \"headers\"; give them with \"auth\" "
                                    + "(basic with passwordEnv or passwordFile, or bearerEnv or bearerFile)")
            }
            if reserved.contains(lower) || lower == "user-agent" {
                throw section.error(name, lower == "user-agent" ? "is set with \"userAgent\"" : "is set by feedsync itself and cannot be replaced")
            }
            guard let value = try section.string(name) else { throw section.error(name, "expected a string, found null") }
            guard value.utf8.count <= maxValueBytes, HeaderValue.isValid(value, allowsSpace: true) else {
                throw section.error(name, "must be 1 to \(maxValueBytes) bytes of visible ASCII with inner spaces, without control characters")
            }
            if headers.keys.contains(where: { $0.lowercased() == lower }) { throw section.error(name, "is given twice, in another case") }
            headers[name] = value
        }
        try section.finish()
        return headers
    }

    /// RFC 9110 §5.6.2 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// The fields for a request to `url`: the user agent always; the extra headers and the
    /// credentials only when `url` has the configured URL's origin.
    func fields(for url: URL) -> [String: String] {
        var fields = ["User-Agent": userAgent]
        guard let home, home.admits(url) else { return fields }
        fields.merge(extra) { _, new in new }
        if let auth { fields["Authorization"] = auth.authorization.revealed }
        return fields
    }
}
