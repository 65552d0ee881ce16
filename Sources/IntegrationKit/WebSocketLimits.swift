import Foundation

/// What a WebSocket connection may cost: how soon it must open, how quiet it may go, and how
/// much it may make the client hold.
public struct WebSocketLimits: Sendable, Equatable {
    /// No byte for this long (a ping is sent at half of it, so a live server always answers) ends the connection.
    public var idleTimeout: TimeInterval = 60
    /// The longest the server may take to accept the connection and finish the opening handshake.
    public var handshakeDeadline: TimeInterval = 30
    /// The longest message, fragments joined (RFC 6455 close code 1009 past it).
    public var maxMessageBytes = 1 << 20
    /// The most message bytes (each counted with 128 bytes of overhead) received but not yet taken
    /// by the consumer: a server that sends faster than the client stores is cut here.
    public var maxPendingBytes = 16 << 20

    /// The limits, each defaulting as documented on its property.
    public init(idleTimeout: TimeInterval = 60, handshakeDeadline: TimeInterval = 30, maxMessageBytes: Int = 1 << 20,
                maxPendingBytes: Int = 16 << 20) {
        self.idleTimeout = idleTimeout
        self.handshakeDeadline = handshakeDeadline
        self.maxMessageBytes = maxMessageBytes
        self.maxPendingBytes = maxPendingBytes
    }
}
