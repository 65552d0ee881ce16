import Core
import Foundation

/// A small command-line parser: `--name value`, `--name=value`, `--flag`, positionals.
///
/// Both executables declare what each command takes; anything else is a ``UsageError``.
public struct CommandLineOptions {
    /// An option a command accepts.
    public struct Spec: Sendable {
        public var name: String
        /// The value's placeholder (`PATH`), or `nil` for a flag.
        public var value: String?
        public var help: String

        public init(_ name: String, value: String? = nil, _ help: String) {
            self.name = name
            self.value = value
            self.help = help
        }
    }

    public private(set) var values: [String: String] = [:]
    public private(set) var flags: Set<String> = []
    public private(set) var positionals: [String] = []

    /// Parses `arguments` against `specs`.
    /// - Throws: ``UsageError`` for an unknown option, a missing value or a repeated option.
    public init(_ arguments: [String], specs: [Spec], usage: String) throws {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--"), argument.count > 2 else {
                if argument.hasPrefix("-") && argument.count > 1 && Double(argument) == nil {
                    throw UsageError("unknown option \(argument)", usage: usage)
                }
                positionals.append(argument)
                continue
            }
            var name = argument
            var inline: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            guard let spec = specs.first(where: { $0.name == name }) else {
                throw UsageError("unknown option \(name)", usage: usage)
            }
            if let placeholder = spec.value {
                guard values[name] == nil else { throw UsageError("\(name) is given twice", usage: usage) }
                if let inline {
                    values[name] = inline
                } else {
                    guard index < arguments.count, !arguments[index].hasPrefix("--") else {
                        throw UsageError("\(name) needs a value (\(name) \(placeholder))", usage: usage)
                    }
                    values[name] = arguments[index]
                    index += 1
                }
            } else {
                guard inline == nil else { throw UsageError("\(name) takes no value", usage: usage) }
                flags.insert(name)
            }
        }
    }

    public subscript(_ name: String) -> String? { values[name] }

    public func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// A whole-number option within `range`, or `fallback` when absent.
    public func int(_ name: String, in range: ClosedRange<Int>, default fallback: Int, usage: String) throws -> Int {
        guard let text = values[name] else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError("\(name) takes a whole number from \(range.lowerBound) to \(range.upperBound), not \"\(text)\"", usage: usage)
        }
        return value
    }

    /// A date option: `2026-01-31` (midnight UTC) or an RFC 3339 time; `nil` when absent.
    public func date(_ name: String, usage: String) throws -> Date? {
        guard let text = values[name] else { return nil }
        let day = DateFormatter()
        day.locale = Locale(identifier: "en_US_POSIX")
        day.timeZone = TimeZone(identifier: "UTC")
        day.dateFormat = "yyyy-MM-dd"
        day.isLenient = false
        if text.count == 10, let date = day.date(from: text), day.string(from: date) == text { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        throw UsageError("\(name) takes a date such as 2026-01-31 or 2026-01-31T12:00:00Z, not \"\(Terminal.safe(text, limit: 60))\"", usage: usage)
    }

    /// Renders specs as the lines of a help text.
    public static func help(for specs: [Spec]) -> String {
        let rows = specs.map { spec in (spec.value.map { "\(spec.name) \($0)" } ?? spec.name, spec.help) }
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { "  " + $0.0.padding(toLength: width + 2, withPad: " ", startingAt: 0) + $0.1 }.joined(separator: "\n")
    }
}
