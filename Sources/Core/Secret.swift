/// A credential or token whose text never appears in a description, a log line or a dump.
///
/// `"\(secret)"`, `print(secret)` and `dump(secret)` all show `<redacted>`; only
/// ``revealed`` gives the text, for the one place that must send it.
///
/// Making one registers its text with ``Redaction`` for as long as a copy of it lives, so any
/// server message, URL or error that repeats it (as it is, encoded, or in part) is redacted
/// before it reaches a terminal, a log or the store. Every secret the process reads (a token or
/// password from the config, a session's tokens, a login's answer) is held as one of these.
public struct Secret: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    private let value: String
    /// Keeps the text registered while this secret or a copy of it lives.
    private let hold: Redaction.Hold?

    public init(_ value: String) {
        self.value = value
        hold = Redaction.hold(value)
    }

    /// An `Authorization` field value, `SCHEME CREDENTIALS` (RFC 9110 §11.4), whose scheme is
    /// public: only `credentials` is registered with ``Redaction``. Registering the whole value
    /// would make every piece of it secret, `Bearer t` among them, and redact the scheme word
    /// wherever another text has it before a token of its own.
    public init(scheme: String, credentials: Secret) {
        value = "\(scheme) \(credentials.value)"
        hold = credentials.hold
    }

    /// The secret's text. Use it only to put the secret on the wire or into the store.
    public var revealed: String { value }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: [:]) }

    public static func == (lhs: Secret, rhs: Secret) -> Bool { lhs.value == rhs.value }
    public func hash(into hasher: inout Hasher) { hasher.combine(value) }
}
