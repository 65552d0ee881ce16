import App
import Foundation

/// `feedsyncd [--config PATH]`: parses the command line and runs the daemon.
enum DaemonCLI {
    static let options: [CommandLineOptions.Spec] = [
        .init("--config", value: "PATH", "the config file (default ./feedsync.json, else $FEEDSYNC_CONFIG)"),
        .init("--version", "print the version"),
        .init("--help", "show this help"),
    ]

    static let usage = "usage: feedsyncd [--config PATH]"

    static func run(_ arguments: [String]) async -> ExitStatus {
        do {
            let parsed = try CommandLineOptions(arguments, specs: options, usage: usage)
            if parsed.has("--help") {
                print("\(usage)\n\nSyncs every configured feed once per its interval until SIGTERM or SIGINT.\n\noptions:\n\(CommandLineOptions.help(for: options))")
                return .ok
            }
            if parsed.has("--version") {
                print("feedsyncd \(feedsyncVersion)")
                return .ok
            }
            guard parsed.positionals.isEmpty else { throw UsageError("feedsyncd takes no arguments", usage: usage) }
            let runtime = try Runtime.load(configPath: parsed["--config"])
            try await runtime.start()
            Log.info("started", ["config": runtime.configName, "feeds": runtime.feedNames.joined(separator: ",")])
            await Daemon(runtime: runtime).run()
            await runtime.stop()
            Log.info("stopped")
            return .ok
        } catch let error as UsageError {
            FileHandle.standardError.write(Data("feedsyncd: \(error.message)\n\(error.usage)\n".utf8))
            return .usage
        } catch {
            FileHandle.standardError.write(Data("feedsyncd: \(describe(error))\n".utf8))
            return ExitStatus(for: error)
        }
    }
}
