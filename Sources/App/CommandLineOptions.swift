import Core
import Foundation

/// A small command-line parser: `--name value`, `--name=value`, `--flag`, positionals, and
/// `--`, after which every argument is a positional (`feedsync remove -- -x`), as POSIX
/// utilities read it (Utility Syntax Guideline 10).
///
/// Both executables declare what each command takes; anything else is a ``UsageError``.
public struct CommandLineOptions {
    /// An option a command accepts: the same shape as an option an integration adds to one.
    public typealias Spec = CommandOption

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
            if argument == "--" {
                positionals += arguments[index...]
                break
            }
            guard argument.hasPrefix("--"), argument.count > 2 else {
                if argument.hasPrefix("-") && argument.count > 1 && Double(argument) == nil {
                    throw UsageError("unknown option \(Terminal.safe(argument, limit: 80)); to pass an argument that begins with '-', put -- before it", usage: usage)
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
                throw UsageError("unknown option \(Terminal.safe(name, limit: 80))", usage: usage)
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
        if let date = Self.day(text) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        throw UsageError("\(name) takes a date such as 2026-01-31 or 2026-01-31T12:00:00Z, not \"\(Terminal.safe(text, limit: 60))\"", usage: usage)
    }

    /// `2026-01-31` as midnight UTC of that day in the proleptic Gregorian calendar, as
    /// ``ISO8601Timestamp`` prints days (Foundation's calendar would read 1500-03-01 as Julian).
    static func day(_ text: String) -> Date? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 10, parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } }),
              let year = Int64(parts[0]), let month = Int64(parts[1]), let day = Int64(parts[2]),
              (1...12).contains(month), (1...31).contains(day) else { return nil }
        let days = ISO8601Timestamp.daysSince1970(year: year, month: month, day: day)
        // 2026-02-30 would count on into March: only a day that reads back the same exists.
        guard ISO8601Timestamp.civilDate(daysSince1970: days) == (year, month, day) else { return nil }
        return Date(timeIntervalSince1970: Double(days) * 86_400)
    }

    /// Renders specs as the lines of a help text.
    public static func help(for specs: [Spec]) -> String {
        let rows = specs.map { spec in (spec.value.map { "\(spec.name) \($0)" } ?? spec.name, spec.help) }
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { "  " + $0.0.padding(toLength: width + 2, withPad: " ", startingAt: 0) + $0.1 }.joined(separator: "\n")
    }
}
