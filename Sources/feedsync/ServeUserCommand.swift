import App
import Core
import Foundation
import IntegrationKit

/// `feedsync serve-user add NAME`: an account of the reader listener, its password read without
/// echo (or as a line of standard input) and kept only as an argon2id hash, in the store.
enum ServeUserAddCommand: Command {
    static let words = ["serve-user", "add"]
    static let summary = "Add an account for reader apps (the password is read without echo)."
    static let synopsis = "serve-user add NAME [--config PATH]"
    static let options: [CommandLineOptions.Spec] = [.config]

    /// The shortest password accepted, in characters.
    static let minimumPasswordLength = 8

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        let name = try ServeUserName.one(options, usage: usage)
        // The store is checked (and made) before the password is asked for.
        let added = try await withRuntime(options, Runtime.Options(feeds: .none, createStore: true)) { runtime -> Bool in
            guard let password = TerminalPrompt.readSecret(prompt: "Password for \(name) (not shown): ") else {
                throw UsageError("no password given: type one at the prompt, or give it as one line of standard input", usage: usage)
            }
            guard password.count >= minimumPasswordLength, password.utf8.count <= PasswordHash.maximumPasswordBytes else {
                throw UsageError("the password must be \(minimumPasswordLength) to \(PasswordHash.maximumPasswordBytes) bytes long", usage: usage)
            }
            let hash: String
            do {
                hash = try PasswordHash.make(for: password)
            } catch let error as PasswordHash.Failure {
                throw ServiceError(.storage, "hashing the password of \(name)", error.description)
            }
            return try await runtime.store.addReaderAccount(name, passwordHash: hash, at: Date())
        }
        guard added else {
            throw UsageError("the reader account \(name) exists already; `feedsync serve-user remove \(name)` first to change its password",
                             usage: usage)
        }
        try output.line("reader account \(name) added")
        return .ok
    }
}

/// `feedsync serve-user remove NAME`: the account goes, and every token handed out to it.
enum ServeUserRemoveCommand: Command {
    static let words = ["serve-user", "remove"]
    static let summary = "Remove an account for reader apps and revoke its tokens."
    static let synopsis = "serve-user remove NAME [--config PATH]"
    static let options: [CommandLineOptions.Spec] = [.config]

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        let name = try ServeUserName.one(options, usage: usage)
        let removed = try await withRuntime(options, localOnly) { try await $0.store.removeReaderAccount(name) }
        guard removed else {
            throw ServiceError(.notFound, "removing the reader account \(name)", "there is no such account; `feedsync serve-user list` lists them")
        }
        try output.line("reader account \(name) removed; its tokens are revoked")
        return .ok
    }
}

/// `feedsync serve-user list`: the accounts, with when each was added, its live login tokens and
/// its feed tokens (which feed, when made; never the token).
enum ServeUserListCommand: Command {
    static let words = ["serve-user", "list"]
    static let summary = "List the accounts for reader apps."
    static let synopsis = "serve-user list [--config PATH]"
    static let options: [CommandLineOptions.Spec] = [.config]

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.isEmpty else { throw UsageError("serve-user list takes no arguments", usage: usage) }
        let (accounts, feedTokens) = try await withRuntime(options, localOnly) {
            (try await $0.store.readerAccounts(at: Date()), try await $0.store.feedTokens(at: Date()))
        }
        if accounts.isEmpty { try output.line("no reader accounts; `feedsync serve-user add NAME` adds one") }
        for account in accounts {
            try output.line("\(account.name)  added \(ISO8601Timestamp.string(from: account.createdAt))  "
                            + "\(account.liveTokens) live token\(account.liveTokens == 1 ? "" : "s")")
            for token in feedTokens where token.name == account.name {
                try output.line("  feed token for \(Terminal.safe(token.feed, limit: 200))  made \(ISO8601Timestamp.string(from: token.createdAt))")
            }
        }
        return .ok
    }
}

/// The one NAME a `serve-user` command takes: 1 to 64 letters, digits and `.`, `_`, `-`, `@`.
enum ServeUserName {
    static let limit = 64

    static func one(_ options: CommandLineOptions, usage: String) throws -> String {
        guard options.positionals.count == 1, let name = options.positionals.first else {
            throw UsageError("give exactly one account NAME", usage: usage)
        }
        return try checked(name, usage: usage)
    }

    /// `name`, when it is a valid account name.
    static func checked(_ name: String, usage: String) throws -> String {
        guard isValid(name) else {
            throw UsageError("the account name \"\(Terminal.safe(name, limit: 80))\" is not 1 to \(limit) letters, digits, "
                             + "'.', '_', '-' or '@'", usage: usage)
        }
        return name
    }

    static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= limit
            && name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || ".-_@".unicodeScalars.contains($0)) }
            && !name.hasPrefix("-")
    }
}
