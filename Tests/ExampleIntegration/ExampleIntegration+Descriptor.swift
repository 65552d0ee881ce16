import Core

extension ExampleIntegration {
    /// The example backend as a registry lists it: posts, a sign-in, and `feedsync add example:ACCOUNT`.
    public static let descriptor = IntegrationDescriptor(
        name: name, summary: "made-up posts for the tests",
        example: #"{"integration": "example", "account": "alice", "tokenEnv": "EXAMPLE_TOKEN", "posts": 3}"#,
        keys: [ConfigKey("account", .string, .required, "whose posts")] + ConfigKey.secret("token", "the account's token")
            + [ConfigKey("posts", .int(1...50), default: "3", "how many posts the account has")],
        posts: PostsCapability(makeBackend: makeBackend),
        signIn: ExampleSignIn(),
        addForms: [ExampleAccountForm()])
}
