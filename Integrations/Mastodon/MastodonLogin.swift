import Core
import Foundation
import IntegrationKit

/// Signing in to a Mastodon server with OAuth 2's authorization code flow and PKCE, as
/// `feedsync login mastodon` does it (Mastodon's methods/apps and methods/oauth; RFC 6749,
/// RFC 7636, RFC 8252).
///
///     let login = MastodonLogin(server: server)
///     let app = try await login.register(redirectURIs: [callback, MastodonLogin.outOfBand])
///     let pkce = MastodonLogin.PKCE()
///     print(login.authorizationURL(app: app, redirectURI: callback, state: state, challenge: pkce.challenge))
///     let token = try await login.exchange(code: code, app: app, redirectURI: callback, verifier: pkce.verifier)
///     let account = try await login.account(token: token)
public struct MastodonLogin: Sendable {
    /// What feedsync asks for: reading only, the scopes its timelines need.
    public static let scopes = "read:statuses read:accounts read:bookmarks read:favourites read:lists"
    /// The redirect for a code the person pastes instead (a server with no browser).
    public static let outOfBand = "urn:ietf:wg:oauth:2.0:oob"

    /// The client the server registered for feedsync; kept beside the token, for revoking it.
    public struct App: Sendable, Equatable {
        public var clientID: String
        /// Held as a ``Core/Secret``, so a server's message that repeats it is redacted.
        public var clientSecret: String {
            get { heldSecret.revealed }
            set { heldSecret = Secret(newValue) }
        }
        private var heldSecret: Secret

        public init(clientID: String, clientSecret: String) {
            self.clientID = clientID
            heldSecret = Secret(clientSecret)
        }
    }

    /// A PKCE pair: the verifier stays here, the challenge (S256) goes in the authorization URL.
    public struct PKCE: Sendable {
        public let verifier: String
        public var challenge: String { Self.base64URL(SHA256.digest(Data(verifier.utf8))) }

        /// 32 random bytes, base64url: 43 characters from RFC 7636's unreserved set.
        public init() { verifier = Self.base64URL(Data((0..<32).map { _ in UInt8.random(in: 0...255) })) }

        public init(verifier: String) { self.verifier = verifier }

        static func base64URL(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
    }

    /// The account a token belongs to.
    public struct Account: Sendable {
        public var username: String
        /// `alice` for the server's own accounts, `alice@other.example` for others.
        public var acct: String
    }

    public let server: URL
    private let transport: any HTTPTransport

    public init(server: URL, transport: any HTTPTransport = CurlTransport(limits: HTTPLimits(idleTimeout: 30, deadline: 60, maxBodyBytes: 1 << 20))) {
        self.server = server
        self.transport = transport
    }

    /// Registers feedsync as a client that may redirect to `redirectURIs` (`POST /api/v1/apps`).
    public func register(redirectURIs: [String]) async throws -> App {
        let operation = "registering feedsync with \(host)"
        let fields = try await post("api/v1/apps", ["client_name": "feedsync", "redirect_uris": redirectURIs.joined(separator: "\n"),
                                                    "scopes": Self.scopes, "website": "https://feedsync.invalid"], operation,
                                    notFound: "\(host) does not register applications (POST /api/v1/apps answered 404); is it a Mastodon server?")
        guard let id = fields["client_id"], let secret = fields["client_secret"], !id.isEmpty, !secret.isEmpty,
              HeaderValue.isValid(id), HeaderValue.isValid(secret) else {
            throw ServiceError(.contractViolation, operation, "the answer has no usable client_id and client_secret")
        }
        return App(clientID: id, clientSecret: secret)
    }

    /// Where the person signs in and consents.
    public func authorizationURL(app: App, redirectURI: String, state: String, challenge: String) -> URL {
        var components = URLComponents(url: server.appendingPathComponent("oauth/authorize"), resolvingAgainstBaseURL: false)!
        components.queryItems = [
            .init(name: "response_type", value: "code"), .init(name: "client_id", value: app.clientID),
            .init(name: "redirect_uri", value: redirectURI), .init(name: "scope", value: Self.scopes),
            .init(name: "state", value: state), .init(name: "code_challenge", value: challenge),
            .init(name: "code_challenge_method", value: "S256"),
        ]
        // URLComponents leaves "+" and ":" alone; a form decoder would read "+" as a space.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        return components.url!
    }

    /// Trades the code for a token (`POST /oauth/token`).
    public func exchange(code: String, app: App, redirectURI: String, verifier: String) async throws -> Secret {
        let operation = "exchanging the authorization code at \(host)"
        // The code and the verifier are credentials too while they travel: a refusal that repeats them is redacted.
        let held = (Secret(code), Secret(verifier))
        defer { withExtendedLifetime(held) {} }
        let fields = try await post("oauth/token", ["grant_type": "authorization_code", "code": code, "client_id": app.clientID,
                                                    "client_secret": app.clientSecret, "redirect_uri": redirectURI,
                                                    "code_verifier": verifier, "scope": Self.scopes], operation)
        guard let token = fields["access_token"], !token.isEmpty else {
            throw ServiceError(.contractViolation, operation, "the answer has no access_token")
        }
        guard token.utf8.count <= 4096, HeaderValue.isValid(token) else {
            throw ServiceError(.contractViolation, operation, "the access token is not a header value (visible ASCII, at most 4096 bytes)")
        }
        return Secret(token)
    }

    /// Whose the token is (`GET /api/v1/accounts/verify_credentials`).
    public func account(token: Secret) async throws -> Account {
        let operation = "checking the new token with \(host)"
        let request = HTTPRequest(url: server.appendingPathComponent("api/v1/accounts/verify_credentials"),
                                  headers: ["Authorization": "Bearer \(token.revealed)", "Accept": "application/json"])
        let fields = try fieldsOf(try await transport.send(request), operation)
        guard let username = fields["username"], let acct = fields["acct"], !acct.isEmpty else {
            throw ServiceError(.contractViolation, operation, "the account has no username or acct")
        }
        return Account(username: username, acct: acct)
    }

    /// Revokes the token (`POST /oauth/revoke`).
    public func revoke(token: Secret, app: App) async throws {
        _ = try await post("oauth/revoke", ["client_id": app.clientID, "client_secret": app.clientSecret, "token": token.revealed],
                           "revoking the token at \(host)")
    }

    private var host: String { Origin(server)?.description ?? server.absoluteString }

    private func post(_ path: String, _ form: [String: String], _ operation: String, notFound: String? = nil) async throws -> [String: String] {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let body = form.sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
        let request = HTTPRequest(method: "POST", url: server.appendingPathComponent(path),
                                  headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"],
                                  body: Data(body.utf8))
        let response = try await transport.send(request)
        if response.status == 404, let notFound { throw ServiceError(.contractViolation, operation, notFound) }
        return try fieldsOf(response, operation)
    }

    /// The answer's top-level string fields, or the server's error as one sentence.
    private func fieldsOf(_ response: HTTPResponse, _ operation: String) throws -> [String: String] {
        let parsed = try? Self.stringFields(response.body)
        let fields = parsed ?? [:]
        if let error = HTTPStatus.error(for: response, operation, detail: HTTPStatus.detail([fields["error"], fields["error_description"]])) {
            // What the server refused (a bad code, client or token) is a credentials problem.
            if case .invalidRequest = error.code { throw ServiceError(.unauthorized, operation, error.reason) }
            throw error
        }
        guard parsed != nil || response.body.isEmpty else {
            throw ServiceError(.invalidResponse, operation, "the answer is not a JSON object")
        }
        return fields
    }

    static func stringFields(_ body: Data) throws -> [String: String] {
        try body.withUnsafeBytes { raw in
            var reader = JSONReader(raw.bindMemory(to: UInt8.self))
            var fields: [String: String] = [:]
            try reader.readObject { reader, key in
                if try reader.peek() == UInt8(ascii: "\"") { fields[key] = try reader.string(key) } else { try reader.skipValue() }
            }
            return fields
        }
    }
}
