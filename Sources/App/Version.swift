/// The version both executables report with `--version`.
public let feedsyncVersion = "0.1.0"

/// The date the manual pages carry (`.Dd`): when their text last changed, as mdoc writes it.
public let manualDate = "November 27, 2026"
