import Core
import Foundation

/// A posts backend of the tests' own, registered the way a new integration is: this folder,
/// a target in `Package.swift`, and one line in a registry. It serves a few made-up posts
/// per account, to a session its token buys, and touches no network.
///
///     {"integration": "example", "account": "alice", "tokenFile": "alice.token", "posts": 3}
public enum ExampleIntegration {
    /// The name a config's `"integration"` gives it.
    static let name = "example"

    /// The token the sign-in keeps for `account`. A login accepts any such token: a feed added
    /// with `add example:ACCOUNT` reads another account with the signed-in one's.
    static func token(for account: String) -> String { tokenPrefix + account }
    static let tokenPrefix = "token-for-"

    /// Builds the backend from its section. It reads its keys but leaves unknown ones to the
    /// app, which refuses what the descriptor's table does not list.
    public static func makeBackend(_ config: ConfigSection, context: IntegrationContext) throws -> FeedBackend {
        let account = try config.require(config.nonEmptyString("account"), "account")
        let token = try config.secret("token")
        let count = try config.int("posts", in: 1...50) ?? 3
        return FeedBackend(posts: ExamplePostService(account: account, count: count),
                           authentication: ExampleAuthentication(account: account, token: token),
                           lifecycle: ExampleLifecycle(name: "example account \(account)"),
                           identity: "example \(account)",
                           account: AccountKey(integration: name, server: "example.invalid", account: account))
    }
}

/// Logs in with a token a sign-in kept, refusing any other.
struct ExampleAuthentication: AuthenticationService {
    let account: String
    let token: Secret

    func logIn() async throws -> Session {
        guard token.revealed.hasPrefix(ExampleIntegration.tokenPrefix) else {
            throw ServiceError(.unauthorized, "logging in as \(account)", "the token is not one a sign-in made")
        }
        return Session(accessToken: Secret("session-with-\(token.revealed)"))
    }

    func refresh(_ session: Session) async throws -> Session { session }
}

/// `count` posts of `account`, one minute apart, in one page; nothing new after it.
struct ExamplePostService: PostService {
    let account: String
    let count: Int

    func page(after cursor: FeedCursor?, session: Session?) async throws -> FeedPage {
        guard session?.accessToken.revealed.hasPrefix("session-with-") == true else {
            throw ServiceError(.unauthorized, "reading \(account)'s posts", "no session")
        }
        let end = FeedCursor(position: "\(count)")
        guard cursor == nil else { return FeedPage(changes: [], nextCursor: cursor ?? end, hasMore: false) }
        let author = User(id: UserID(account), handle: account, displayName: account.capitalized)
        let posts = (1...count).map { index in
            FeedChange.upsert(Post(id: PostID("\(account)-\(index)"), author: author, text: "post \(index) of \(account)",
                                   createdAt: Date(timeIntervalSince1970: 1_767_225_600 + Double(index) * 60)))
        }
        return FeedPage(changes: posts, nextCursor: end, hasMore: false)
    }
}

/// Nothing to set up or tear down.
struct ExampleLifecycle: IntegrationLifecycle {
    let name: String

    func setUp() async throws {}

    func tearDown() async {}
}
