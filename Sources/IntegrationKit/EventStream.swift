import Core
import Foundation
import Synchronization

/// What an event stream delivers: first that it opened, then its events.
public enum EventStreamMessage: Sendable, Equatable {
    /// The server accepted the stream (`200`, `text/event-stream`).
    case opened
    case event(ServerSentEvent)
}

/// A transport that can hold a `text/event-stream` open and hand its events over as they arrive.
public protocol EventStreamTransport: Sendable {
    /// Opens `request` as an event stream.
    ///
    /// The stream yields ``EventStreamMessage/opened`` once, then each event; it finishes when
    /// the server ends the answer, and ends when the consumer stops iterating.
    ///
    /// - Throws (through the stream): ``Core/ServiceError`` — `.unauthorized` (401/403),
    ///   `.rateLimited`, `.invalidRequest` (404/410), `.unavailable` (refused, reset, idle past
    ///   ``EventStreamLimits/idleTimeout``, no header fields within the deadline),
    ///   `.contractViolation` (a redirect, not `text/event-stream`, a bound of the parser or of
    ///   the pending events passed), `.invalidResponse` (broken transfer encoding).
    func eventStream(_ request: HTTPRequest, limits: EventStreamLimits) -> EventStream
}

/// The events of one open stream; iterate it once.
///
/// It counts the bytes of the events handed over but not yet taken, so a producer that runs
/// ahead of the consumer is stopped at ``EventStreamLimits/maxPendingBytes``.
public struct EventStream: AsyncSequence, Sendable {
    public typealias Element = EventStreamMessage
    let base: AsyncThrowingStream<EventStreamMessage, any Error>
    let pending: PendingBytes

    /// A stream of `messages`, as a test's transport builds one.
    public init(_ messages: AsyncThrowingStream<EventStreamMessage, any Error>) {
        base = messages
        pending = PendingBytes()
    }

    init(base: AsyncThrowingStream<EventStreamMessage, any Error>, pending: PendingBytes) {
        self.base = base
        self.pending = pending
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<EventStreamMessage, any Error>.AsyncIterator
        let pending: PendingBytes

        public mutating func next() async throws -> EventStreamMessage? {
            let message = try await base.next()
            if case .event(let event)? = message { pending.taken(PendingBytes.cost(of: event)) }
            return message
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), pending: pending) }
}

/// Bytes handed to the consumer and not yet taken, shared by a stream's two ends.
final class PendingBytes: Sendable {
    private let count = Atomic<Int>(0)

    /// Adds `bytes`; `false` when that passes `limit`.
    func added(_ bytes: Int, limit: Int) -> Bool {
        count.add(bytes, ordering: .relaxed).newValue <= limit
    }

    func taken(_ bytes: Int) { count.subtract(bytes, ordering: .relaxed) }

    /// What an event waiting costs: its data, plus what holding any event costs, so a flood of
    /// empty events is bounded too.
    static func cost(of event: ServerSentEvent) -> Int { event.data.utf8.count + event.type.utf8.count + 128 }
}
