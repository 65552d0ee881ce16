import Core
import Foundation
import Synchronization

/// The loopback end of a sign-in (RFC 8252 §7.3): waits for the one callback that answers
/// *this* sign-in — a request to `/callback` whose `state` is the one the sign-in made — and
/// takes its code, or the server's refusal.
///
/// The state is checked before anything else is read: a request without it, with another, or
/// with it twice is answered 400 and changes nothing, and the wait goes on until the real
/// callback or the deadline. So a page that sends the browser to the loopback port (with an
/// `error=`, or a code of its own) cannot end or hijack a sign-in in progress.
///
///     let callback = OAuthCallback(state: state)
///     let listener = try HTTPListener(address: loopback, loopbackOnly: true, handler: callback.handle)
///     let code = try await callback.code(within: 300, host: "example.social")
public final class OAuthCallback: Sendable {
    private let state: String
    private let outcome = Mutex<Result<String, ServiceError>?>(nil)

    /// - Parameter state: the unguessable value the authorization URL carries.
    public init(state: String) { self.state = state }

    /// What the listener answers. Only a callback with this sign-in's state decides the outcome,
    /// and only the first.
    public func handle(_ request: HTTPListener.Request) -> HTTPListener.Response {
        guard request.path == "/callback" else { return .init(status: 404, body: "not found\n") }
        let items = URLComponents(string: "/?" + request.query)?.queryItems ?? []
        let states = items.filter { $0.name == "state" }
        guard states.count == 1, let given = states[0].value, Self.same(given, state) else {
            return .init(status: 400, body: "this is not the answer to the sign-in feedsync is waiting for (its state is missing or another's); ignored\n")
        }
        func item(_ name: String) -> String? { items.first { $0.name == name }?.value }
        let operation = "signing in"
        let result: Result<String, ServiceError>
        if let error = item("error") {
            let description = item("error_description").map { ": \(Terminal.safe($0, limit: 200))" } ?? ""
            result = .failure(ServiceError(.unauthorized, operation, "the server refused the sign-in (\(Terminal.safe(error, limit: 80))\(description))"))
        } else if let code = item("code"), !code.isEmpty, code.utf8.count <= 2048 {
            result = .success(code)
        } else {
            result = .failure(ServiceError(.unauthorized, operation, "the callback carries no authorization code"))
        }
        let first = outcome.withLock { current -> Bool in
            guard current == nil else { return false }
            current = result
            return true
        }
        guard first else { return .init(status: 409, body: "this sign-in is over; return to the terminal\n") }
        switch result {
        case .success: return .init(status: 200, contentType: "text/html; charset=utf-8",
                                    body: "<!doctype html><title>feedsync</title><p>Signed in. You can close this window and return to the terminal.</p>\n")
        case .failure(let error): return .init(status: 400, body: "\(error.reason)\n")
        }
    }

    /// The code, or the sign-in's failure; gives up after `seconds`.
    ///
    /// - Throws: ``ServiceError`` `.unauthorized`: the server's refusal, a callback without a
    ///   code, or no callback within `seconds`.
    public func code(within seconds: TimeInterval, host: String) async throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let result = outcome.withLock({ $0 }) { return try result.get() }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ServiceError(.unauthorized, "signing in to \(host)", "no answer came back from the browser within \(Int(seconds / 60)) minutes; start again")
    }

    /// Whether two states are equal, in a time that does not tell how much of a guess was right.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
