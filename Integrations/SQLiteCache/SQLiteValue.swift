/// A value bound to an SQL parameter. Integers are always bound as 64-bit.
enum SQLiteValue {
    case integer(Int64)
    case real(Double)
    case text(String)
    case null

    static func integer(_ value: Int?) -> SQLiteValue { value.map { .integer(Int64($0)) } ?? .null }
    static func integer(_ value: Int64?) -> SQLiteValue { value.map { .integer($0) } ?? .null }
    static func text(_ value: String?) -> SQLiteValue { value.map { .text($0) } ?? .null }
    static func real(_ value: Double?) -> SQLiteValue { value.map { .real($0) } ?? .null }
}
