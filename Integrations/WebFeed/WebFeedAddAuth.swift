import Core
import Foundation

/// The credentials `feedsync add URL` is given for a private web feed: its `--basic-user`,
/// `--password-env`/`--password-file`, `--bearer-env`/`--bearer-file` options, as the `"auth"`
/// object the config gets. Only where the secret is goes into the config, never the secret.
enum WebFeedAddAuth {
    static let options: [AddOption] = [
        AddOption(CommandOption("--basic-user", value: "USER", "a private feed's HTTP Basic user (with --password-env or --password-file)"),
                  appliesTo: "a web feed"),
        AddOption(CommandOption("--password-env", value: "VAR", "the environment variable that holds the Basic password"), appliesTo: "a web feed"),
        AddOption(CommandOption("--password-file", value: "PATH", "the file (mode 0600) that holds the Basic password"), appliesTo: "a web feed"),
        AddOption(CommandOption("--bearer-env", value: "VAR", "the environment variable that holds a private feed's bearer token"),
                  appliesTo: "a web feed"),
        AddOption(CommandOption("--bearer-file", value: "PATH", "the file (mode 0600) that holds a private feed's bearer token"),
                  appliesTo: "a web feed"),
    ]

    /// The `"auth"` object the options make, and its credentials read as a pull will read them;
    /// `nil` when no option is given.
    ///
    /// - Throws: a usage error for options that do not make one `auth` (a password without a
    ///   user, a user without a password, Basic and bearer together, two places for one secret);
    ///   ``ConfigError`` for what the config would refuse (a missing secret, plain http).
    static func read(_ context: any AddContext, for url: URL) throws -> (object: ConfigValue, credentials: WebFeedAuth)? {
        let user = context.option("--basic-user")
        let password = try place(context, "--password-env", "--password-file", keys: ("passwordEnv", "passwordFile"))
        let bearer = try place(context, "--bearer-env", "--bearer-file", keys: ("bearerEnv", "bearerFile"))
        let object: [String: ConfigValue]
        switch (user, password, bearer) {
        case (nil, nil, nil):
            return nil
        case (let user?, let password?, nil):
            object = ["basic": .object(["user": .string(user), password.key: .string(password.value)])]
        case (nil, nil, let bearer?):
            object = [bearer.key: .string(bearer.value)]
        case (_, _, .some):
            throw context.usageError("give either --basic-user (with its password) or a bearer token, not both")
        case (nil, .some, nil):
            throw context.usageError("--password-env and --password-file need --basic-user")
        case (.some, nil, nil):
            throw context.usageError("--basic-user needs --password-env VAR or --password-file PATH")
        }
        let section = ConfigSection(["auth": .object(object)], path: "posts", context: context.configContext)
        guard let credentials = try WebFeedAuth.read(section, url: url) else { return nil }
        return (.object(object), credentials)
    }

    /// Where one secret is, from the option of each kind: at most one of them.
    private static func place(_ context: any AddContext, _ env: String, _ file: String,
                              keys: (env: String, file: String)) throws -> (key: String, value: String)? {
        switch (context.option(env), context.option(file)) {
        case (nil, nil): return nil
        case (let variable?, nil): return (keys.env, variable)
        case (nil, let path?): return (keys.file, path)
        case (.some, .some): throw context.usageError("give \(env) or \(file), not both")
        }
    }
}
