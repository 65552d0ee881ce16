/// The account a backend logs in as. Sessions belong to accounts, not to feeds.
///
/// Every feed that names the same account shares one session: one login, one refresh. Each
/// integration derives its key in one place, where it builds a feed's ``FeedBackend``, from
/// the settings that name the account, never from a secret.
///
///     AccountKey(integration: "example", server: "https://api.example", account: "demo")
public struct AccountKey: Hashable, Sendable, CustomStringConvertible {
    /// The integration's config name (its descriptor's): `"example"`.
    public var integration: String
    /// Where the account lives: the server's URL, or whatever else tells its servers apart.
    public var server: String
    /// Who logs in there: a username, a handle, the name of the secret that holds a token.
    public var account: String

    public init(integration: String, server: String, account: String) {
        self.integration = integration
        self.server = server
        self.account = account
    }

    /// `example account demo on https://api.example`: what a message says, control characters
    /// escaped.
    public var description: String {
        "\(integration) account \(Terminal.safe(account, limit: 120)) on \(Terminal.safe(server, limit: 200))"
    }
}
