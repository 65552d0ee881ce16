import Foundation

/// What a sign-in knows when it asks where its login goes (``SignInContext/target(_:)``).
public struct SignInRequest {
    /// The integration of its feeds: its descriptor's name.
    public var integration: String
    /// The `posts` key naming its secret file (`accessTokenFile`).
    public var secretKey: String
    /// The account as a person reads it (`@alice@example.social`), for messages.
    public var account: String
    /// The name a new feed gets without `--name`.
    public var defaultName: String
    /// The secret file's suffix after the feed's name, without `--token-file`: `token` for `NAME.token`.
    public var secretFileSuffix: String
    /// Whether a feed's `posts` section (with its secret file resolved) is this account's
    /// login: `true`, `false`, or `nil` when it cannot be told.
    public var isAccount: ([String: ConfigValue], URL) -> Bool?

    public init(integration: String, secretKey: String, account: String, defaultName: String, secretFileSuffix: String,
                isAccount: @escaping ([String: ConfigValue], URL) -> Bool?) {
        self.integration = integration
        self.secretKey = secretKey
        self.account = account
        self.defaultName = defaultName
        self.secretFileSuffix = secretFileSuffix
        self.isAccount = isAccount
    }
}

/// Where a login goes, as the config decides it: a new feed with a secret file of its own, or
/// the login of the account the config has, whose secret file is replaced in place.
public struct SignInTarget: Sendable, Equatable {
    /// The feed's name: the new feed's, or the login's whose secret is refreshed.
    public var name: String
    /// Where the secret goes.
    public var secretFile: URL
    /// For a refresh, every feed of the config that reads with ``secretFile``; empty otherwise.
    public var refreshed: [String]
    /// Whether a feed entry is to be added (a new login without `--no-feed`).
    public var addsFeed: Bool

    public init(name: String, secretFile: URL, refreshed: [String], addsFeed: Bool) {
        self.name = name
        self.secretFile = secretFile
        self.refreshed = refreshed
        self.addsFeed = addsFeed
    }

    /// Whether the login replaces the secret of feeds the config has.
    public var isRefresh: Bool { !refreshed.isEmpty }

    /// The refreshed feeds as a person reads them: `feed "a"` or `feeds "a", "b"`.
    public var refreshedFeeds: String {
        (refreshed.count == 1 ? "feed " : "feeds ") + refreshed.map { "\"\(Terminal.safe($0, limit: 80))\"" }.joined(separator: ", ")
    }
}
