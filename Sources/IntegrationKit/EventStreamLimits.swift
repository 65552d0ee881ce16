import Core
import Foundation

/// What a long-lived event stream may cost: how quiet it may go, how soon it must answer, and
/// how much it may make the client hold.
///
/// A stream has no total deadline (it is meant to last), so these bounds replace
/// ``HTTPLimits/deadline`` and ``HTTPLimits/maxBodyBytes``.
public struct EventStreamLimits: Sendable, Equatable {
    /// No sign of life for this long ends the stream: `streamIdleSeconds`. A sign of life is an
    /// event, a `data:` line or a keep-alive comment; field lines and blank lines alone are not.
    public var idleTimeout: TimeInterval = 60
    /// The longest the server may take to connect and send its answer's header fields.
    public var headersDeadline: TimeInterval = 30
    /// The longest line, and the most data one event may carry.
    public var maxEventBytes = 1 << 20
    /// The most bytes of lines that dispatch nothing (comments, `event:`, `id:`, `retry:`,
    /// unknown fields, blank lines) between two events.
    public var maxBytesWithoutEvent = 1 << 20
    /// The most event bytes (each event counted with 128 bytes of overhead) received but not yet taken by the consumer: a stream that sends
    /// faster than the mirror writes is cut here, and the reconnect's catch-up sync fills in.
    public var maxPendingBytes = 16 << 20

    public init(idleTimeout: TimeInterval = 60, headersDeadline: TimeInterval = 30, maxEventBytes: Int = 1 << 20,
                maxBytesWithoutEvent: Int = 1 << 20, maxPendingBytes: Int = 16 << 20) {
        self.idleTimeout = idleTimeout
        self.headersDeadline = headersDeadline
        self.maxEventBytes = maxEventBytes
        self.maxBytesWithoutEvent = maxBytesWithoutEvent
        self.maxPendingBytes = maxPendingBytes
    }

    /// The keys ``init(_:)`` reads, as an integration's descriptor lists them.
    public static let keys = [
        ConfigKey("streamIdleSeconds", .int(5...3600), default: "60", "how long the stream may stay silent before it is reconnected, in seconds"),
    ]

    /// Reads `streamIdleSeconds` (5–3600, default 60).
    public init(_ config: ConfigSection) throws {
        idleTimeout = TimeInterval(try config.int("streamIdleSeconds", in: 5...3600) ?? 60)
    }
}
