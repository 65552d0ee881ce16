import Foundation

/// How `feedsync login NAME` signs in to an integration, and how `feedsync logout` ends such
/// a login: declared by the integration (its descriptor's ``IntegrationDescriptor/signIn``),
/// run by the app through a ``SignInContext``, which holds what every sign-in shares (the
/// command line, the terminal, the config edit and the secret files, changed all or nothing).
///
///     struct ExampleSignIn: SignInFlow {
///         let label = "Example", place = "an Example server", argument = "SERVER"
///         let options: [CommandOption] = []
///         func signIn(_ server: String, _ context: any SignInContext) async throws { … }
///         func signOut(feed: String, posts: [String: ConfigValue], _ context: any SignOutContext) async throws -> SignedOut { … }
///     }
public protocol SignInFlow: Sendable {
    /// The integration as a person names it, before the help of its options: `Mastodon`.
    var label: String { get }
    /// Where one signs in, for the command's summary: `a Mastodon server`, `Bluesky`.
    var place: String { get }
    /// What `login NAME` takes next, for the synopsis: `SERVER`, `HANDLE`.
    var argument: String { get }
    /// The options only this flow reads.
    var options: [CommandOption] { get }

    /// Signs in as `argument` says and keeps the login: a secret file and a new feed, or, for
    /// an account that has a login in the config, that login's secret replaced in place.
    ///
    /// Everything that can fail is decided before anything is written; the files and the config
    /// change together at ``SignInContext/commit()`` or not at all.
    /// - Throws: ``ServiceError`` (exit 77 for refused credentials), ``ConfigError``, or
    ///   ``SignInContext/usageError(_:)`` for what the person typed.
    func signIn(_ argument: String, _ context: any SignInContext) async throws

    /// Ends the login of `feed`, whose entry the app is taking out of the config: revokes what
    /// the backend can revoke (after ``SignOutContext/prepare()``) and names the files to delete.
    ///
    /// - Parameter posts: the feed's `posts` section as written.
    /// - Returns: what to print before and after the line that says the feed was removed.
    func signOut(feed: String, posts: [String: ConfigValue], _ context: any SignOutContext) async throws -> SignedOut
}

/// What `logout` prints of an ended login.
public struct SignedOut: Sendable, Equatable {
    /// Lines before the one saying the feed was removed (`revoked the token at example.social`).
    public var before: [String]
    /// Lines after it (`deleted /var/lib/feedsync/me.token`).
    public var after: [String]

    public init(before: [String] = [], after: [String] = []) {
        self.before = before
        self.after = after
    }
}
