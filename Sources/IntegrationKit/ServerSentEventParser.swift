import Foundation

/// One event of a `text/event-stream`, as the WHATWG HTML standard's "server-sent events"
/// section dispatches it.
public struct ServerSentEvent: Hashable, Sendable {
    /// The `event:` field, or `"message"` when the event named none.
    public var type: String
    /// The `data:` lines, joined by line feeds.
    public var data: String
    /// The last event ID in force when the event was dispatched (`id:` fields persist).
    public var lastEventID: String

    public init(type: String = "message", data: String, lastEventID: String = "") {
        self.type = type
        self.data = data
        self.lastEventID = lastEventID
    }
}

/// Turns the bytes of a `text/event-stream` into events, as they arrive, within bounds.
///
/// Written from the WHATWG HTML standard, §9.2 "Server-sent events" (the event stream
/// interpretation): a leading BOM is skipped; lines end with CRLF, LF or CR (a CR at the end of
/// one chunk and an LF at the start of the next are one line end); a line starting with `:` is a
/// comment; `field: value` loses one space after the colon; `data` lines are joined with LF;
/// `id` with a NUL is ignored; `retry` takes ASCII digits only; an empty line dispatches, and an
/// event with no data is not dispatched; an unfinished event at the end of the stream is dropped.
///
/// Bounds (every byte is hostile): a line or an event's data over ``maxEventBytes`` stops the
/// parser with a ``Failure``, and so does more than ``maxBytesWithoutEvent`` of lines that
/// dispatch nothing between two events. Every such line counts, whatever it carries: a comment,
/// `event:`, `id:`, `retry:`, an unknown field, a field without a colon, a blank line with no
/// data to dispatch (its bytes and its line end, as one byte). `data:` lines are bounded by
/// ``maxEventBytes`` instead, until the blank line that dispatches them. Its memory never exceeds
/// about twice ``maxEventBytes``.
///
/// ``signsOfLife`` counts what shows the stream is alive: comments (the standard's keep-alive),
/// `data:` lines and dispatched events. A transport's idle clock follows it, so field lines
/// alone do not keep a stream open.
public struct ServerSentEventParser: Sendable {
    /// Why the parser stopped: one sentence.
    public struct Failure: Error, Equatable, Sendable {
        public var reason: String
    }

    public let maxEventBytes: Int
    public let maxBytesWithoutEvent: Int
    /// The reconnection time the stream asked for with `retry:`, in milliseconds.
    public private(set) var retryMilliseconds: Int?
    /// Comment lines seen so far (`:thump` keep-alives).
    public private(set) var comments = 0
    /// Comments, `data:` lines and dispatched events seen so far: it grows while the stream is
    /// alive, and stands still while it sends only field lines and blank lines.
    public private(set) var signsOfLife = 0
    /// The bytes of lines that dispatched nothing since the last event.
    public private(set) var bytesWithoutEvent = 0

    private var line: [UInt8] = []
    private var data: [UInt8] = []
    private var hasData = false
    private var eventType = ""
    private var lastEventID = ""
    private var afterCR = false
    private var atStart = true
    private var bomBytesSeen = 0

    private static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// - Parameters:
    ///   - maxEventBytes: the longest line, and the most data one event may carry (1 MiB).
    ///   - maxBytesWithoutEvent: the most bytes of lines that dispatch nothing between two
    ///     events (1 MiB).
    public init(maxEventBytes: Int = 1 << 20, maxBytesWithoutEvent: Int = 1 << 20) {
        self.maxEventBytes = maxEventBytes
        self.maxBytesWithoutEvent = maxBytesWithoutEvent
    }

    /// Reads the next bytes of the stream.
    ///
    /// - Returns: the events those bytes completed, in order.
    /// - Throws: ``Failure`` past a bound; the parser must not be fed again.
    public mutating func feed<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if atStart {
                // The BOM is skipped only as the stream's first bytes; anything else ends the check.
                if byte == Self.bom[bomBytesSeen] {
                    bomBytesSeen += 1
                    if bomBytesSeen == Self.bom.count { atStart = false }
                    continue
                }
                atStart = false
                let partial = Self.bom.prefix(bomBytesSeen)
                bomBytesSeen = 0
                for earlier in partial { try take(earlier, into: &events) }
            }
            try take(byte, into: &events)
        }
        return events
    }

    private mutating func take(_ byte: UInt8, into events: inout [ServerSentEvent]) throws {
        switch byte {
        case 0x0A where afterCR:
            afterCR = false
        case 0x0A, 0x0D:
            afterCR = byte == 0x0D
            try endLine(into: &events)
        default:
            afterCR = false
            guard line.count < maxEventBytes else {
                throw Failure(reason: "a line of the event stream is longer than \(maxEventBytes) bytes")
            }
            line.append(byte)
        }
    }

    private mutating func endLine(into events: inout [ServerSentEvent]) throws {
        defer { line.removeAll(keepingCapacity: line.count <= 4096) }
        guard let first = line.first else {
            if dispatch(into: &events) { return }
            return try countWithoutEvent()
        }
        if first == UInt8(ascii: ":") {
            comments += 1
            signsOfLife += 1
            return try countWithoutEvent()
        }
        let colon = line.firstIndex(of: UInt8(ascii: ":"))
        let field = String(decoding: line[..<(colon ?? line.endIndex)], as: UTF8.self)
        var valueStart = colon.map { line.index(after: $0) } ?? line.endIndex
        if valueStart < line.endIndex, line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
        let value = line[valueStart...]
        switch field {
        case "event":
            eventType = String(decoding: value, as: UTF8.self)
        case "data":
            guard data.count + value.count + 1 <= maxEventBytes else {
                throw Failure(reason: "an event of the stream carries more than \(maxEventBytes) bytes of data")
            }
            data.append(contentsOf: value)
            data.append(0x0A)
            hasData = true
            signsOfLife += 1
            return
        case "id":
            if !value.contains(0) { lastEventID = String(decoding: value, as: UTF8.self) }
        case "retry":
            if !value.isEmpty, value.allSatisfy({ (0x30...0x39).contains($0) }) {
                retryMilliseconds = Int(String(decoding: value, as: UTF8.self)) ?? Int.max
            }
        default:
            break
        }
        try countWithoutEvent()
    }

    /// Counts the line just ended (and its line end) toward the bound between events.
    private mutating func countWithoutEvent() throws {
        bytesWithoutEvent += line.count + 1
        guard bytesWithoutEvent <= maxBytesWithoutEvent else {
            throw Failure(reason: "the event stream sent more than \(maxBytesWithoutEvent) bytes without an event "
                          + "(comments, field lines or blank lines that dispatch nothing)")
        }
    }

    /// Dispatches the event the lines so far make, if they carry data; returns whether it did.
    private mutating func dispatch(into events: inout [ServerSentEvent]) -> Bool {
        defer {
            data.removeAll(keepingCapacity: data.count <= 4096)
            hasData = false
            eventType = ""
        }
        guard hasData else { return false }
        bytesWithoutEvent = 0
        signsOfLife += 1
        data.removeLast()
        events.append(ServerSentEvent(type: eventType.isEmpty ? "message" : eventType,
                                      data: String(decoding: data, as: UTF8.self), lastEventID: lastEventID))
        return true
    }
}
