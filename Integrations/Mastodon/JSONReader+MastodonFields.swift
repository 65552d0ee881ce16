import IntegrationKit

/// Field readers for the Mastodon entities. A bad field becomes a `JSONReader.FieldError` whose
/// reason names it by its path in the status (`account.acct is null`,
/// `media_attachments.meta.original.width has the wrong type`); the status it belongs to is
/// skipped with that reason, and the rest of the page stands.
extension JSONReader {
    /// A string the entity must have.
    mutating func requiredString(_ path: @autoclosure () -> String) throws -> String {
        let next = try peek()
        guard next == UInt8(ascii: "\"") else { throw Self.mismatch(next, path()) }
        return try string(path())
    }

    /// A string, or `nil` for `null`.
    mutating func stringOrNull(_ path: @autoclosure () -> String) throws -> String? {
        switch try peek() {
        case UInt8(ascii: "\""): return try string(path())
        case UInt8(ascii: "n"): _ = try readNull(); return nil
        default: throw FieldError(reason: "\(path()) has the wrong type")
        }
    }

    /// A whole number that fits an `Int` (also as `5.0` or `5e2`), or `nil` for `null`.
    mutating func wholeNumberOrNull(_ path: @autoclosure () -> String) throws -> Int? {
        try expectNumberOrNull(path())
        return try optionalWholeNumber(path())
    }

    /// A finite number, or `nil` for `null`.
    mutating func numberOrNull(_ path: @autoclosure () -> String) throws -> Double? {
        try expectNumberOrNull(path())
        return try optionalDouble(path())
    }

    /// Whether an object comes next (`true`, not consumed) or `null` (`false`, consumed).
    mutating func objectOrNull(_ path: @autoclosure () -> String) throws -> Bool {
        switch try peek() {
        case UInt8(ascii: "{"): return true
        case UInt8(ascii: "n"): _ = try readNull(); return false
        default: throw FieldError(reason: "\(path()) has the wrong type")
        }
    }

    /// Checks that an object comes next, without consuming it.
    mutating func expectObject(_ path: @autoclosure () -> String) throws {
        let next = try peek()
        guard next == UInt8(ascii: "{") else { throw Self.mismatch(next, path()) }
    }

    private mutating func expectNumberOrNull(_ path: @autoclosure () -> String) throws {
        let next = try peek()
        guard next == UInt8(ascii: "-") || (0x30...0x39).contains(next) || next == UInt8(ascii: "n") else {
            throw FieldError(reason: "\(path()) has the wrong type")
        }
    }

    private static func mismatch(_ next: UInt8, _ path: String) -> FieldError {
        FieldError(reason: next == UInt8(ascii: "n") ? "\(path) is null" : "\(path) has the wrong type")
    }
}
