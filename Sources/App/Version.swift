/// The version both executables report with `--version`.
public let feedsyncVersion = "0.1.0"
