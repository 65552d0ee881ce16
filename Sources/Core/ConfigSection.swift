import Foundation

/// One JSON object of the config file, read key by key with errors that name the key path.
///
/// Integrations read their own section through it, so every integration reports bad config
/// the same way. Call ``finish()`` after reading every key: it rejects keys nobody read.
///
///     let url = try section.require(section.httpURL("baseURL"), "baseURL")
///     try section.finish()
///
/// - Important: Not `Sendable`: a section is read once, while the config loads.
public final class ConfigSection {
    /// The key path of this object: `""` for the file, `feeds[0].posts` below it.
    public let path: String
    public let context: ConfigContext
    private let object: [String: ConfigValue]
    /// The keys read, each once, in the order first read: a section reads a handful, and an
    /// array of them costs a quarter of a set's bytes, for each of the 100,000 feeds an OPML
    /// file may expand to while the config loads (issue 40).
    private var readKeys: [String] = []

    public init(_ object: [String: ConfigValue], path: String, context: ConfigContext) {
        self.object = object
        self.path = path
        self.context = context
    }

    /// A new section holding this one's keys plus `values` (which win), at `path`: how one
    /// entry's settings become the defaults of many (the feeds an OPML file expands to).
    public func merging(_ values: [String: ConfigValue], path: String) -> ConfigSection {
        ConfigSection(object.merging(values) { _, new in new }, path: path, context: context)
    }

    /// The key path of `key` inside this section.
    public func keyPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// An error about `key` (or, with `nil`, about this section as a whole).
    public func error(_ key: String?, _ message: String) -> ConfigError {
        ConfigError(file: context.fileName, keyPath: key.map(keyPath) ?? path, message: message)
    }

    /// The keys read so far, present or not: what ``finish(alsoKnown:)`` accepts. A test holds
    /// an integration's descriptor to the keys its builder reads with it.
    public var keysRead: Set<String> { Set(readKeys) }

    /// The keys the object holds, sorted: for an object whose keys are names the config
    /// chooses (a feed's `"headers"`, `"searches"`).
    public var keys: [String] { object.keys.sorted() }

    /// The section's keys and their values, which may cross threads: a section made again from
    /// them (with a context of its own) reads what this one read. The media archive reads its
    /// feeds' credentials so, when it is made, rather than at every config load.
    public var values: [String: ConfigValue] { object }

    /// Whether the key is present with a non-null value.
    public func has(_ key: String) -> Bool {
        if let value = object[key], value != .null { return true }
        return false
    }

    private func value(_ key: String) -> ConfigValue? {
        if !readKeys.contains(key) { readKeys.append(key) }
        guard let value = object[key], value != .null else { return nil }
        return value
    }

    /// Returns `value`, or throws "is required" for `key` when it is `nil`.
    public func require<T>(_ value: T?, _ key: String) throws -> T {
        guard let value else {
            let misspelt = object.keys.filter { $0 != key && !readKeys.contains($0) }
                .min { Self.distance(key, $0) < Self.distance(key, $1) }
            if let misspelt, Self.distance(key, misspelt) <= max(2, key.count / 3) {
                throw error(key, "is required; \"\(misspelt)\" looks like a misspelling of it")
            }
            throw error(key, "is required")
        }
        return value
    }

    public func string(_ key: String) throws -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let string) = value else { throw error(key, "expected a string, found \(value)") }
        return string
    }

    /// A string that must not be empty or blank.
    public func nonEmptyString(_ key: String) throws -> String? {
        guard let string = try string(key) else { return nil }
        guard !string.trimmingCharacters(in: .whitespaces).isEmpty else { throw error(key, "must not be empty") }
        return string
    }

    public func bool(_ key: String) throws -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let bool) = value else { throw error(key, "expected true or false, found \(value)") }
        return bool
    }

    public func double(_ key: String, in range: ClosedRange<Double>) throws -> Double? {
        guard let value = value(key) else { return nil }
        guard case .number(let number) = value else { throw error(key, "expected a number, found \(value)") }
        guard range.contains(number) else {
            throw error(key, "\(value) is out of range (\(ConfigValue.number(range.lowerBound)) to \(ConfigValue.number(range.upperBound)))")
        }
        return number
    }

    public func int(_ key: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let value = value(key) else { return nil }
        guard case .number(let number) = value, number.rounded() == number, abs(number) < 1e15 else {
            throw error(key, "expected a whole number, found \(value)")
        }
        guard range.contains(Int(number)) else {
            throw error(key, "\(value) is out of range (\(range.lowerBound) to \(range.upperBound))")
        }
        return Int(number)
    }

    /// An absolute `http` or `https` URL with a host.
    ///
    /// A URL with credentials in it (`http://bob:hunter2@host`) is refused without repeating
    /// them: secrets are read from `…Env` or `…File` keys only.
    public func httpURL(_ key: String) throws -> URL? {
        guard let string = try string(key) else { return nil }
        let url = URL(string: string)
        if let url, url.user != nil || url.password != nil {
            var shown = URLComponents(url: url, resolvingAgainstBaseURL: false)
            shown?.user = nil
            shown?.password = nil
            throw error(key, "\"\(Terminal.safe(shown?.string ?? "the URL", limit: 200))\" must not carry a user name or password; "
                        + "give the password with \"passwordEnv\" or \"passwordFile\" instead")
        }
        guard let url, let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty
        else { throw error(key, "\"\(Terminal.safe(string, limit: 200))\" is not an http(s) URL") }
        return url
    }

    /// The URL of a server that will receive credentials: `https`, or plain `http` only to this
    /// machine (loopback) or when the operator allowed it.
    ///
    /// - Parameter insecureHint: what the operator can do about plain http, for the message.
    public func serverURL(_ key: String, allowInsecureHTTP: Bool = false, insecureHint: String) throws -> URL? {
        guard let url = try httpURL(key) else { return nil }
        if url.scheme?.lowercased() == "http" && !allowInsecureHTTP && !Self.isLoopback(url.host ?? "") {
            throw error(key, "\"\(url.absoluteString)\" is plain http to a host that is not loopback; \(insecureHint)")
        }
        return url
    }

    /// Whether `host` is this machine: `localhost`, 127.0.0.0/8 or ::1.
    public static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if host == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// A file path, resolved against the config file's folder.
    public func path(_ key: String) throws -> URL? {
        guard let string = try nonEmptyString(key) else { return nil }
        return context.resolve(path: string)
    }

    /// A duration such as `"90s"`, `"5m"` or `"1h"`, within `range` (seconds): a floor keeps a
    /// typo from hammering a server or burning CPU, a ceiling keeps timers representable.
    public func duration(_ key: String, in range: ClosedRange<TimeInterval>) throws -> TimeInterval? {
        guard let raw = value(key) else { return nil }
        guard case .string(let string) = raw, let seconds = Self.parseDuration(string) else {
            throw error(key, "\(raw) is not a duration; write a number with s, m or h, as in \"5m\"")
        }
        guard seconds > 0 else { throw error(key, "\(raw) must be longer than zero") }
        guard seconds >= range.lowerBound else { throw error(key, "\(raw) is shorter than the minimum of \(Self.describe(range.lowerBound))") }
        guard seconds <= range.upperBound else { throw error(key, "\(raw) is longer than the maximum of \(Self.describe(range.upperBound))") }
        return seconds
    }

    /// `"10s"`, `"30 days"`: a bound as a person reads it.
    private static func describe(_ seconds: TimeInterval) -> String {
        if seconds >= 86_400, seconds.truncatingRemainder(dividingBy: 86_400) == 0 { return "\(Int(seconds / 86_400)) days" }
        return seconds.rounded() == seconds ? "\(Int(seconds))s" : "\(seconds)s"
    }

    static func parseDuration(_ text: String) -> TimeInterval? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let unit = trimmed.last, let scale = ["s": 1.0, "m": 60.0, "h": 3600.0][String(unit)],
              let number = Double(trimmed.dropLast()), number.isFinite
        else { return nil }
        return number * scale
    }

    /// An array of strings; `nil` when the key is absent or holds something other than an array.
    ///
    /// - Throws: ``ConfigError`` for an array that holds something other than strings.
    public func stringList(_ key: String) throws -> [String]? {
        guard case .array(let items)? = value(key) else { return nil }
        return try items.enumerated().map { index, item in
            guard case .string(let string) = item else {
                throw ConfigError(file: context.fileName, keyPath: "\(keyPath(key))[\(index)]", message: "expected a string, found \(item)")
            }
            return string
        }
    }

    /// A nested object.
    public func section(_ key: String) throws -> ConfigSection? {
        guard let value = value(key) else { return nil }
        guard case .object(let object) = value else { throw error(key, "expected an object, found \(value)") }
        return ConfigSection(object, path: keyPath(key), context: context)
    }

    /// An array of objects.
    public func sections(_ key: String) throws -> [ConfigSection]? {
        guard let value = value(key) else { return nil }
        guard case .array(let items) = value else { throw error(key, "expected an array, found \(value)") }
        return try items.enumerated().map { index, item in
            let itemPath = "\(keyPath(key))[\(index)]"
            guard case .object(let object) = item else {
                throw ConfigError(file: context.fileName, keyPath: itemPath, message: "expected an object, found \(item)")
            }
            return ConfigSection(object, path: itemPath, context: context)
        }
    }

    /// A secret named `name`, read from the environment variable named by `<name>Env` or from
    /// the file named by `<name>File`; never from the config itself.
    ///
    /// - Throws: ``ConfigError`` when neither or both are given, the variable is unset or empty,
    ///   the file cannot be read or is empty, or the secret is written inline.
    public func secret(_ name: String) throws -> Secret {
        let envKey = name + "Env", fileKey = name + "File"
        if has(name) {
            _ = value(name)
            throw error(name, "secrets are not read from the config file; name an environment variable with \"\(envKey)\" or a file with \"\(fileKey)\"")
        }
        let variable = try nonEmptyString(envKey)
        let file = try path(fileKey)
        switch (variable, file) {
        case (let variable?, nil):
            guard let value = context.environment[variable], !value.isEmpty else {
                return try missing(error(envKey, "environment variable \(variable) is not set or empty"))
            }
            return Secret(value)
        case (nil, let file?):
            guard let data = FileManager.default.contents(atPath: file.path),
                  let text = String(data: data, encoding: .utf8)
            else { return try missing(error(fileKey, "cannot read the secret file \(file.path)")) }
            let secret = text.trimmingCharacters(in: .newlines)
            guard !secret.isEmpty else { return try missing(error(fileKey, "the secret file \(file.path) is empty")) }
            if let mode = (try? FileManager.default.attributesOfItem(atPath: file.path))?[.posixPermissions] as? Int,
               mode & 0o077 != 0 {
                context.warnings.add("\(context.fileName): \(keyPath(fileKey)): the secret file \(file.path) can be read by "
                                     + "other users (mode \(String(mode & 0o777, radix: 8))); run chmod 600 \(file.path)")
            }
            return Secret(secret)
        case (nil, nil):
            throw error(nil, "needs \"\(envKey)\" (an environment variable holding the \(name)) or \"\(fileKey)\"")
        case (.some, .some):
            throw error(nil, "give either \"\(envKey)\" or \"\(fileKey)\", not both")
        }
    }

    /// Throws `error`, or, while the context defers missing secrets, notes it and returns a
    /// placeholder that is never sent anywhere.
    private func missing(_ error: ConfigError) throws -> Secret {
        guard context.deferMissingSecrets else { throw error }
        context.missingSecrets.add(error.description)
        return Secret("")
    }

    /// Rejects any key that was never read, suggesting the nearest known one.
    ///
    /// - Parameter known: keys that are valid here although this reader did not read them.
    public func finish(alsoKnown known: [String] = []) throws {
        let valid = Set(readKeys).union(known)
        for key in object.keys.sorted() where !valid.contains(key) {
            let nearest = valid.min { Self.distance(key, $0) < Self.distance(key, $1) }
            if let nearest, Self.distance(key, nearest) <= max(2, key.count / 3) {
                throw error(key, "unknown key; did you mean \"\(nearest)\"?")
            }
            let choices = valid.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
            throw error(key, "unknown key; valid keys here are \(choices)")
        }
    }

    /// Edit distance, case-insensitive, for "did you mean" suggestions.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.lowercased()), b = Array(b.lowercased())
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }
}
