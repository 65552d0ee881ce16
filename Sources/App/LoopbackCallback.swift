import Core
import Foundation

/// A sign-in's loopback redirect (RFC 8252 §7.3): an ``HTTPListener`` on `127.0.0.1` and a free
/// port, answering with ``OAuthCallback``, until ``stop()``.
///
///     let callback = try LoopbackCallback(state: state)
///     defer { callback.stop() }
///     register(redirect: callback.redirectURI)
///     let code = try await callback.code(within: 300, host: "example.social")
public final class LoopbackCallback: SignInCallback {
    private let callback: OAuthCallback
    private let listener: HTTPListener
    public let redirectURI: String

    /// Starts listening.
    /// - Throws: ``ListenError`` when no loopback port can be bound.
    public init(state: String) throws {
        callback = OAuthCallback(state: state)
        listener = try HTTPListener(address: try ListenAddress("127.0.0.1:1").withPort(0), loopbackOnly: true, handler: callback.handle)
        listener.start()
        redirectURI = "http://127.0.0.1:\(listener.port)/callback"
    }

    public func code(within seconds: TimeInterval, host: String) async throws -> String {
        try await callback.code(within: seconds, host: host)
    }

    public func stop() { listener.stop() }
}
