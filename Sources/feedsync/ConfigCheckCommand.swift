import App
import Core

/// `feedsync config check`: reads and checks the config without touching anything.
enum ConfigCheckCommand: Command {
    static let words = ["config", "check"]
    static let summary = "Check the config file and say what is wrong, changing nothing."
    static let synopsis = "config check [--config PATH]"
    static let options: [CommandLineOptions.Spec] = [.config]

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.isEmpty else { throw UsageError("config check takes no arguments", usage: usage) }
        var load = Runtime.Options()
        load.deferMissingSecrets = true
        let runtime = try Runtime.load(configPath: options["--config"], load)
        for warning in runtime.warnings { printError("feedsync: warning: \(Terminal.safe(warning))") }
        let feeds = runtime.feedNames
        try output.line("\(runtime.configName): ok; \(feeds.count) feed\(feeds.count == 1 ? "" : "s") (\(feeds.joined(separator: ", ")))")
        for lifecycle in runtime.provider.lifecycles { try output.line("  \(Terminal.safe(lifecycle.name, limit: 300))") }
        let expanded = feeds.filter { runtime.feedOrigins[$0] != nil }
        if !expanded.isEmpty {
            try output.line("expanded from OPML: \(expanded.count) feed\(expanded.count == 1 ? "" : "s")")
            for name in expanded { try output.line("  \(name) <- \(Terminal.safe(runtime.feedOrigins[name] ?? "", limit: 400))") }
        }
        if let address = runtime.metricsListen {
            // A running feedsyncd holds its own port, so a port in use is a warning here, not an error.
            if let problem = HTTPListener.problem(binding: address) {
                printError("feedsync: warning: metrics.listen: \(problem); feedsyncd will exit 78 unless the port is free when it starts")
            } else {
                print("metrics: feedsyncd will serve /metrics and /healthz on \(address)\(address.isLoopback ? "" : " (reachable from other machines)")")
            }
        }
        // A secret this environment lacks is not a fault of the file: say so, and what needs it.
        for missing in runtime.missingSecrets {
            printError("feedsync: warning: secret not available here: \(Terminal.safe(missing)); `feedsync pull` and feedsyncd will need it")
        }
        return .ok
    }
}
