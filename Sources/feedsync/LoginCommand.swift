import App
import Core
import Foundation

/// `feedsync login KIND WHAT`: sign in to an integration that has a sign-in flow (its
/// descriptor's ``IntegrationDescriptor/signIn``), keep the secret in a 0600 file, and add a
/// feed for the account's home timeline — or, for an account that has a login in the config,
/// replace that login's secret in place.
///
/// The flow decides everything that can fail before anything is written (``LoginTarget``), and
/// the files are changed together or not at all (``FileTransaction``), through a ``LoginSession``.
enum LoginCommand: Command {
    static let words = ["login"]

    /// The sign-in flows the registry knows, in its order.
    static var flows: [(descriptor: IntegrationDescriptor, flow: any SignInFlow)] { FeedsyncCLI.registry.signIns }

    static var summary: String {
        "Sign in to \(listed(flows.map(\.flow.place), lastJoin: " or ")) and add your home timeline."
    }

    static var synopsis: String {
        kinds(separator: " | ") + " [--name NAME] [--no-feed] [--token-file PATH] [--config PATH]"
    }

    static var options: [CommandLineOptions.Spec] {
        var specs: [CommandLineOptions.Spec] = [
            .config,
            .init("--name", value: "NAME", "the feed's name (default: the account's handle)"),
            .init("--no-feed", "sign in and keep the secret, but add no feed"),
            .init("--token-file", value: "PATH", "where the token or app password goes (default: beside the store, NAME.token)"),
        ]
        for (_, flow) in flows {
            for option in flow.options where !specs.contains(where: { $0.name == option.name }) {
                specs.append(.init(option.name, value: option.value, "\(flow.label): \(option.help)"))
            }
        }
        return specs
    }

    /// `login mastodon SERVER` and the like, one per flow.
    static func kinds(separator: String) -> String {
        flows.map { "login \($0.descriptor.name) \($0.flow.argument)" }.joined(separator: separator)
    }

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.count == 2 else {
            throw UsageError("name the network and the account: \(kinds(separator: ", or "))", usage: usage)
        }
        if let name = options["--name"], let problem = FeedName.problem(name) {
            throw UsageError("--name \(problem)", usage: usage)
        }
        let kind = options.positionals[0].lowercased()
        guard let (_, flow) = flows.first(where: { $0.descriptor.name.lowercased() == kind }) else {
            let names = listed(flows.map(\.descriptor.name), lastJoin: " or ")
            throw UsageError("\"\(Terminal.safe(options.positionals[0], limit: 40))\" is not a network feedsync signs in to; use \(names)", usage: usage)
        }
        try await flow.signIn(options.positionals[1], LoginSession(options, output: output, usage: usage, registry: FeedsyncCLI.registry))
        return .ok
    }
}
