/// `feedsyncd`'s command line as its help and its manual page show it: declared here, in the
/// app, so `feedsync man feedsyncd` writes the page from the same declarations the daemon parses.
public enum DaemonCommandLine {
    public static let options: [CommandLineOptions.Spec] = [
        .init("--config", value: "PATH", "the config file (default ./feedsync.json, else $FEEDSYNC_CONFIG)"),
        .init("--log-level", value: "LEVEL", "debug, info, warn or error (default info)"),
        .init("--version", "print the version"),
        .init("--help", "show this help"),
    ]

    public static let usage = "usage: feedsyncd [--config PATH] [--log-level debug|info|warn|error]"

    /// What the daemon does, in one sentence.
    public static let summary = "Syncs every configured feed on its interval until stopped. One logfmt line per event on stderr."

    /// Each signal the daemon handles and what it does on it.
    public static let signals: [(name: String, effect: String)] = [
        ("SIGTERM", "stop after the page being committed; a second SIGTERM or SIGINT exits at once"),
        ("SIGINT", "the same as SIGTERM"),
        ("SIGHUP", "reload the config, keeping the running one if the new one is invalid, and the reader listener's TLS certificate and key"),
    ]

    public static let help = """
        \(usage)

        \(summary)
        Signals: SIGTERM or SIGINT stop after the page being committed (a second one exits at once);
        SIGHUP reloads the config, keeping the running one if the new one is invalid, and the reader
        listener's TLS certificate and key (a pair that does not load keeps the one in use).

        options:
        \(CommandLineOptions.help(for: options))
        """
}
