/// A config file that cannot be used, with the file, the key path and what is wrong.
///
/// `description` is one sentence: `feedsync.json: feeds[0].posts.baseURL: "htp://x" is not an http(s) URL`.
public struct ConfigError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The config file as the operator named it.
    public var file: String
    /// Where in the file: `feeds[0].interval`; empty for the file as a whole.
    public var keyPath: String
    public var message: String

    public init(file: String, keyPath: String, message: String) {
        self.file = file
        self.keyPath = keyPath
        self.message = message
    }

    public var description: String {
        keyPath.isEmpty ? "\(file): \(message)" : "\(file): \(keyPath): \(message)"
    }
}
