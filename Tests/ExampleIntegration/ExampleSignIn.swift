import Core
import Foundation

/// `feedsync login example ACCOUNT`: keeps the account's token in a 0600 file and adds its
/// feed, through the app's sign-in machinery; `--refuse` plays a server that says no after
/// the token file was planned, so nothing may be written.
struct ExampleSignIn: SignInFlow {
    let label = "Example"
    let place = "an example account"
    let argument = "ACCOUNT"
    let options = [CommandOption("--refuse", "play a server that refuses the sign-in")]

    func signIn(_ account: String, _ context: any SignInContext) async throws {
        guard !account.isEmpty, account.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber) }) else {
            throw context.usageError("\"\(Terminal.safe(account, limit: 80))\" is not an example account; write lower-case letters and digits")
        }
        try context.readConfig()
        let target = try context.target(SignInRequest(integration: ExampleIntegration.name, secretKey: "tokenFile", account: "example account \(account)",
                                                      defaultName: account, secretFileSuffix: "token") { posts, _ in
            guard case .string(let name)? = posts["account"] else { return false }
            return name == account
        })
        try context.write(secret: ExampleIntegration.token(for: account), to: target.secretFile)
        if context.flag("--refuse") {
            throw ServiceError(.unauthorized, "signing in as \(account)", "the example server refused")
        }
        if target.addsFeed {
            try context.addFeed(NewFeed(name: target.name, interval: "5m", posts: [
                ("integration", .string(ExampleIntegration.name)), ("account", .string(account)),
                ("tokenFile", .string(context.configPath(target.secretFile))),
            ]))
        } else {
            try context.keepConfig()
        }
        try context.commit()
        try context.say("logged in as \(account); token saved in \(target.secretFile.path)")
        if target.addsFeed {
            try await context.announce("added feed \(target.name) (example account \(account)) to \(context.configName)")
        } else {
            try await context.reloadDaemons()
        }
    }

    func signOut(feed: String, posts: [String: ConfigValue], _ context: any SignOutContext) async throws -> SignedOut {
        guard case .string(let path)? = posts["tokenFile"] else { throw context.usageError("feed \(feed) keeps no token file") }
        let file = context.resolve(path: path)
        try context.refuseShared(file)
        context.remove(file)
        return SignedOut(after: ["deleted \(file.path)"])
    }
}

/// `feedsync add example:ACCOUNT`: another account's posts, read with the config's example login.
struct ExampleAccountForm: AddForm {
    let summary = "example:ACCOUNT"
    let label = "Example"
    let noun = "an example account"
    let options = [AddOption(CommandOption("--posts", value: "N", "how many posts the account has (default 3)"), appliesTo: "example accounts")]
    let precedence = AddPrecedence.syntax

    func recognises(_ text: String, _ context: any AddContext) throws -> Bool {
        guard text.hasPrefix("example:") else { return false }
        guard !text.dropFirst(8).isEmpty else { throw context.usageError("name the account after example:") }
        return true
    }

    func add(_ text: String, _ context: any AddContext) async throws -> AddedFeeds {
        let account = String(text.dropFirst(8))
        guard let login = try context.feeds().map(\.posts).first(where: { $0["integration"] == .string(ExampleIntegration.name) }) else {
            throw context.usageError("\(context.configName) has no example login; run `feedsync login example ACCOUNT` first")
        }
        var posts: [(key: String, value: ConfigValue)] = [("integration", .string(ExampleIntegration.name)), ("account", .string(account))]
        posts += ConfigKey.secretSource("token", in: login)
        if let count = context.option("--posts") {
            guard let number = Int(count) else { throw context.usageError("--posts takes a whole number") }
            posts.append(("posts", .number(Double(number))))
        }
        let name = context.option("--name") ?? FeedNaming.name(from: account)
        return AddedFeeds(feeds: [NewFeed(name: name, posts: posts)], saying: "added feed \(name) (example account \(account)) to \(context.configName)")
    }
}
