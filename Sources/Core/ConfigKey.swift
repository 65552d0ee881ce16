import Foundation

/// One key of an integration's config section, as its descriptor lists it: the table the app
/// checks a section against, and the manual's rows are made from.
///
///     ConfigKey("pageSize", .int(1...40), default: "40", "statuses asked for per page")
///     ConfigKey.secret("accessToken", "the access token")   // accessTokenEnv and accessTokenFile
///
/// The integration still reads and checks its section through ``ConfigSection``; a test of the
/// app checks that each one reads exactly the keys of its table, with the table's bounds.
public struct ConfigKey: Sendable, Equatable {
    /// What the key's value is, with the bounds the integration holds it to.
    public enum Kind: Sendable, Equatable, CustomStringConvertible {
        /// Any string (a name, a timeline).
        case string
        /// An absolute `http` or `https` URL.
        case url
        /// A URL of another scheme (`postgresql://`, `wss://`).
        case uri
        /// A file or folder, resolved against the config's folder.
        case path
        /// The name of an environment variable.
        case environmentVariable
        case bool
        /// A whole number within the range.
        case int(ClosedRange<Int>)
        /// A number within the range.
        case double(ClosedRange<Double>)
        /// A duration written `"90s"`, `"5m"` or `"1h"`, within the range of seconds.
        case duration(ClosedRange<TimeInterval>)
        /// A date, `2026-01-31` or an RFC 3339 time.
        case date
        /// A JSON object of keys of its own (`"auth"`, `"headers"`), which the doc describes.
        case object
        /// A JSON array of objects (`"rules"`), which the doc describes.
        case list

        /// The kind as the manual writes it: `integer 1–40`, `duration 1s–1h`.
        public var description: String {
            switch self {
            case .string: "string"
            case .url: "http(s) URL"
            case .uri: "URL"
            case .path: "path"
            case .environmentVariable: "environment variable"
            case .bool: "boolean"
            case .int(let range): "integer \(range.lowerBound)–\(range.upperBound)"
            case .double(let range): "number \(ConfigValue.number(range.lowerBound))–\(ConfigValue.number(range.upperBound))"
            case .duration(let range): "duration \(Self.seconds(range.lowerBound))–\(Self.seconds(range.upperBound))"
            case .date: "date"
            case .object: "object"
            case .list: "list"
            }
        }

        private static func seconds(_ value: TimeInterval) -> String {
            if value >= 3600, value.truncatingRemainder(dividingBy: 3600) == 0 { return "\(Int(value / 3600))h" }
            if value >= 60, value.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(value / 60))m" }
            return value.rounded() == value ? "\(Int(value))s" : "\(value)s"
        }
    }

    /// Whether a section must hold the key.
    public enum Requirement: Sendable, Equatable {
        case optional
        case required
        /// Exactly one key of the group must be given (a secret's `…Env` or `…File`).
        case oneOf(String)
    }

    public var name: String
    public var kind: Kind
    public var requirement: Requirement
    /// The value a section without the key gets, as the manual writes it (`40`, `"home"`,
    /// `the idle timeout when longer`); `nil` when there is none.
    public var defaultValue: String?
    /// What the key does, in one line.
    public var doc: String
    /// Whether the key leads to a secret (the variable or file that holds it). The value of
    /// the key itself is never the secret: the config holds none.
    public var isSecret: Bool

    /// An optional key.
    public init(_ name: String, _ kind: Kind, default defaultValue: String? = nil, _ doc: String, secret isSecret: Bool = false) {
        self.init(name, kind, .optional, default: defaultValue, doc, secret: isSecret)
    }

    public init(_ name: String, _ kind: Kind, _ requirement: Requirement, default defaultValue: String? = nil,
                _ doc: String, secret isSecret: Bool = false) {
        self.name = name
        self.kind = kind
        self.requirement = requirement
        self.defaultValue = defaultValue
        self.doc = doc
        self.isSecret = isSecret
    }

    /// The two keys that name where a secret is, as ``ConfigSection/secret(_:)`` reads them:
    /// `<name>Env` (an environment variable) and `<name>File` (a file), one of them required.
    ///
    /// - Parameter optional: whether the section may give neither (a store without a password).
    public static func secret(_ name: String, _ doc: String, optional: Bool = false) -> [ConfigKey] {
        let requirement: Requirement = optional ? .optional : .oneOf(name)
        return [ConfigKey(name + "Env", .environmentVariable, requirement, "the environment variable holding \(doc)", secret: true),
                ConfigKey(name + "File", .path, requirement, "a file holding \(doc) (mode 0600)", secret: true)]
    }

    /// Where a section as written keeps the secret `name`: its `<name>File`, its `<name>Env`, or
    /// (refused when built, but copied as it is) `<name>`; empty when it names none. A feed that
    /// reads with another feed's login (`feedsync add @user@server`) copies it.
    public static func secretSource(_ name: String, in section: [String: ConfigValue]) -> [(key: String, value: ConfigValue)] {
        for key in [name + "File", name + "Env", name] {
            if case .string? = section[key], let value = section[key] { return [(key, value)] }
        }
        return []
    }
}
