/// A credential or token whose text never appears in a description, a log line or a dump.
///
/// `"\(secret)"`, `print(secret)` and `dump(secret)` all show `<redacted>`; only
/// ``revealed`` gives the text, for the one place that must send it.
public struct Secret: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    private let value: String

    public init(_ value: String) { self.value = value }

    /// The secret's text. Use it only to put the secret on the wire or into the store.
    public var revealed: String { value }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
