import Foundation
import Synchronization

/// Where a config file lives and what environment it is read in.
public struct ConfigContext: Sendable {
    /// The config file as the operator named it, for messages.
    public var fileName: String
    /// The folder relative paths in the config resolve against.
    public var directory: URL
    /// The process environment, where `…Env` keys find their secrets.
    public var environment: [String: String]
    /// Problems worth a word that do not make the config unusable.
    public let warnings = ConfigWarnings()
    /// With ``deferMissingSecrets``: each secret the environment lacks, one sentence each.
    public let missingSecrets = ConfigWarnings()
    /// Whether a missing secret is noted in ``missingSecrets`` (and a placeholder used) rather
    /// than thrown: `config check` checks the rest of a config on a machine without the secrets.
    public var deferMissingSecrets: Bool {
        get { missingSecrets.isDeferring }
        nonmutating set { missingSecrets.isDeferring = newValue }
    }

    public init(fileName: String, directory: URL, environment: [String: String]) {
        self.fileName = fileName
        self.directory = directory
        self.environment = environment
    }

    /// Resolves a path from the config against the config file's folder (`~` expands to home).
    public func resolve(path: String) -> URL {
        let expanded = (path as NSString).expandingTildeInPath
        if expanded.hasPrefix("/") { return URL(fileURLWithPath: expanded).standardizedFileURL }
        return directory.appendingPathComponent(expanded).standardizedFileURL
    }
}

/// Warnings gathered while a config is read, each one sentence.
public final class ConfigWarnings: Sendable {
    private let lines = Mutex<[String]>([])
    private let deferring = Mutex(false)

    /// For the list of missing secrets: whether they are being noted rather than thrown.
    public var isDeferring: Bool {
        get { deferring.withLock { $0 } }
        set { deferring.withLock { $0 = newValue } }
    }

    public init() {}

    public func add(_ line: String) { lines.withLock { $0.append(line) } }

    public var all: [String] { lines.withLock { $0 } }
}
