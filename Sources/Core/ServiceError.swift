import Foundation

/// The error vocabulary every integration translates its failures into, so that the sync
/// logic never sees a `URLError` or an SQLite result code.
///
/// `description` is one sentence a person can act on: what was being done, and what went wrong.
///
/// Both phrases pass through ``Redaction`` when they are set, so a server's message that repeats
/// a token or password the request carried never travels on in an error, whoever prints, logs
/// or stores it.
public struct ServiceError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: Hashable, Sendable {
        /// The backend rejected the credentials or the token.
        case unauthorized
        /// The backend asks to come back later; `until` is when, if it said.
        case rateLimited(until: Date?)
        /// The backend could not be reached or answered with a server error.
        case unavailable
        /// The backend answered something that does not follow its contract (a malformed or
        /// truncated body): often transient, so it is retried.
        case invalidResponse
        /// The backend broke its contract in a way a retry will not mend: a redirect to another
        /// origin, an answer over the size limit or past its deadline, pages that go in circles.
        case contractViolation
        /// One item could not be read; the rest of its page stands.
        case invalidItem
        /// The request itself was refused as malformed (a bad cursor, say).
        case invalidRequest
        /// The local store failed to read or write.
        case storage
        /// What the command names does not exist: a stored post, or the store itself.
        case notFound
        /// Another process is writing the store and did not let go in time.
        case locked
        /// The sync refused to do something that would lose data (a mass deletion, say).
        case refused
    }

    public var code: Code
    /// What was being done, as a phrase: `"fetching the feed from http://127.0.0.1:8080"`.
    public var operation: String { didSet { operation = Redaction.redact(operation) } }
    /// What went wrong, as a phrase: `"the server answered 503"`.
    public var reason: String { didSet { reason = Redaction.redact(reason) } }

    public init(_ code: Code, _ operation: String, _ reason: String) {
        self.code = code
        self.operation = Redaction.redact(operation)
        self.reason = Redaction.redact(reason)
    }

    public var description: String { "\(operation): \(reason)" }
}
