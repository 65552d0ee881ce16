import Core
import Foundation

/// What one response may cost: how long it may take and how large it may be.
///
/// Every HTTP integration reads the same keys from its config section:
/// `timeoutSeconds` (idle), `deadlineSeconds` (total) and `maxResponseBytes`.
public struct HTTPLimits: Sendable, Equatable {
    /// The longest the transport waits for the next byte.
    public var idleTimeout: TimeInterval = 30
    /// The longest one request may take in all, however steadily bytes arrive.
    public var deadline: TimeInterval = 120
    /// The largest body accepted, counted after decompression, checked while it streams in.
    public var maxBodyBytes = 16 << 20
    /// How many same-origin redirects one request may follow.
    public var maxRedirects = 5

    public init(idleTimeout: TimeInterval = 30, deadline: TimeInterval = 120, maxBodyBytes: Int = 16 << 20, maxRedirects: Int = 5) {
        self.idleTimeout = idleTimeout
        self.deadline = deadline
        self.maxBodyBytes = maxBodyBytes
        self.maxRedirects = maxRedirects
    }

    /// The keys ``init(_:)`` reads, as an integration's descriptor lists them.
    public static let keys = [
        ConfigKey("timeoutSeconds", .int(1...600), default: "30", "the longest wait for the next byte of an answer, in seconds"),
        ConfigKey("deadlineSeconds", .int(1...3600), default: "120, or timeoutSeconds when that is longer",
                  "the longest one request may take in all, in seconds"),
        ConfigKey("maxResponseBytes", .int(1024...(1 << 30)), default: "16777216 (16 MiB)",
                  "the largest answer accepted, counted after decompression"),
    ]

    /// Reads `timeoutSeconds` (1–600, default 30), `deadlineSeconds` (1–3600, default 120, or
    /// the idle timeout when that is longer) and `maxResponseBytes` (1 KiB–1 GiB, default 16 MiB).
    public init(_ config: ConfigSection) throws {
        idleTimeout = TimeInterval(try config.int("timeoutSeconds", in: 1...600) ?? 30)
        deadline = TimeInterval(try config.int("deadlineSeconds", in: 1...3600) ?? Int(max(120, idleTimeout)))
        maxBodyBytes = try config.int("maxResponseBytes", in: 1024...(1 << 30)) ?? (16 << 20)
    }
}
