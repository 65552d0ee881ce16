import Core
import Foundation
import IntegrationKit

/// Who a request comes from: `ClientLogin` checks a name and password against the store's
/// argon2id hash and hands out a token; every other call carries it as
/// `Authorization: GoogleLogin auth=TOKEN`. Tokens are kept as their SHA-256 and live
/// ``tokenLifetime``; failures are slowed by a ``LoginThrottle``; nothing secret is logged.
struct ReaderAuthenticator: Sendable {
    /// How long a token handed out at a login is valid.
    static let tokenLifetime: TimeInterval = 30 * 86_400
    /// The longest name or password a login may send, in bytes.
    static let fieldLimit = 1_024

    let store: any ReaderAccountStore
    let throttle = LoginThrottle()
    let checks = PasswordCheck()
    let log: Logger

    /// The answer to `ClientLogin`: `SID=…\nLSID=…\nAuth=…\n`, or 401 after the slow-down.
    func login(_ fields: FormFields, from address: String) async throws -> ServedResponse {
        guard let name = fields["Email"], let password = fields["Passwd"], !name.isEmpty,
              name.utf8.count <= Self.fieldLimit, password.utf8.count <= Self.fieldLimit else {
            return .text(400, "ClientLogin needs Email and Passwd, each at most \(Self.fieldLimit) bytes\n")
        }
        guard try await check(fields, from: address) != nil else { return .text(401, "wrong name or password\n") }
        let token = PasswordHash.randomToken()
        let now = Date()
        try await store.saveReaderToken(digest: PasswordHash.digest(ofToken: token.revealed), of: name, at: now,
                                        expiresAt: now.addingTimeInterval(Self.tokenLifetime))
        let auth = token.revealed
        return .text(200, "SID=\(auth)\nLSID=\(auth)\nAuth=\(auth)\n")
    }

    /// The account `Email` names when `Passwd` is its password; `nil` (after the slow-down) when not.
    func check(_ fields: FormFields, from address: String) async throws -> String? {
        guard let name = fields["Email"], let password = fields["Passwd"], !name.isEmpty,
              name.utf8.count <= Self.fieldLimit, password.utf8.count <= Self.fieldLimit else { return nil }
        let owed = await throttle.delay(address: address, name: name)
        if owed > .zero { try await Task.sleep(for: owed) }
        let hash = try await store.passwordHash(ofReaderAccount: name)
        // A name that does not exist costs the same hash check as one that does.
        let matches = await checks.verify(password, against: hash ?? Self.decoyHash)
        guard matches, hash != nil else {
            let wait = await throttle.failed(address: address, name: name)
            log.warn("reader_login_refused", ["address": address, "name": String(name.prefix(64))])
            try await Task.sleep(for: wait)
            return nil
        }
        await throttle.succeeded(address: address, name: name)
        return name
    }

    /// The account a request's token belongs to, or `nil` (then the request gets 401).
    func account(of request: ServedRequest) async throws -> (name: String, token: String)? {
        guard let header = request.header("authorization"), header.utf8.count <= 512 else { return nil }
        let prefix = "GoogleLogin auth="
        guard header.hasPrefix(prefix) else { return nil }
        let token = String(header.dropFirst(prefix.count)).trimmingCharacters(in: .whitespaces)
        guard token.count == 64, token.allSatisfy(\.isHexDigit) else { return nil }
        guard let name = try await store.readerAccount(holdingToken: PasswordHash.digest(ofToken: token), at: Date()) else { return nil }
        return (name, token)
    }

    /// The account whose feed token (`?token=`) opens `feed`; `nil` (after the slow-down, as a
    /// wrong password) when none does.
    func feedReader(token: String, feed: String, from address: String) async throws -> String? {
        let owed = await throttle.delay(address: address, name: "?token " + feed)
        if owed > .zero { try await Task.sleep(for: owed) }
        let valid = token.count == 64 && token.allSatisfy(\.isHexDigit)
        guard valid, let name = try await store.readerAccount(holdingFeedToken: PasswordHash.digest(ofToken: token), feed: feed, at: Date()) else {
            let wait = await throttle.failed(address: address, name: "?token " + feed)
            log.warn("reader_feed_token_refused", ["address": address, "feed": String(feed.prefix(64))])
            try await Task.sleep(for: wait)
            return nil
        }
        await throttle.succeeded(address: address, name: "?token " + feed)
        return name
    }

    /// The short token `/reader/api/0/token` hands out for writes (`T=`): derived from the
    /// login's token, so it needs no storage and dies with it.
    static func editToken(for token: String) -> String {
        String(PasswordHash.digest(ofToken: "edit:" + token).prefix(57))
    }

    /// An argon2id hash of no one's password, checked when the name is unknown.
    private static let decoyHash = (try? PasswordHash.make(for: "feedsync decoy \(UUID().uuidString)")) ?? ""
}
