import Foundation
import IntegrationKit
import Testing

/// The bound between dispatched events (WHATWG HTML §9.2.6, "interpreting an event stream"):
/// every kind of line the standard names that dispatches nothing counts toward it — a comment,
/// each field it defines (`event`, `id`, `retry`), a field it does not, a line with no colon,
/// a blank line with no data to dispatch — in each of the three line ends; `data` lines are
/// bounded by the event's own size instead; a dispatched event starts the count afresh.
@Suite struct ServerSentEventBoundTests {
    struct Line: CustomTestStringConvertible, Sendable {
        var name: String
        /// One line, its line end included.
        var text: String
        var testDescription: String { name }
        /// What it counts: its bytes before the line end, plus one for the line end.
        var cost: Int {
            var body = Array(text.utf8)
            while let last = body.last, last == 0x0A || last == 0x0D { body.removeLast() }
            return body.count + 1
        }
    }

    /// The lines that dispatch nothing, as §9.2.6 sorts them.
    static let quietLines: [Line] = [
        Line(name: "a comment (the standard's keep-alive)", text: ":thump\n"),
        Line(name: "an empty comment", text: ":\n"),
        Line(name: "a comment with a space", text: ": keep-alive\r\n"),
        Line(name: "event sets the type only", text: "event: update\n"),
        Line(name: "event with no colon", text: "event\r"),
        Line(name: "id sets the last event ID only", text: "id: 42\n"),
        Line(name: "id with NUL, ignored", text: "id: 4\u{0}2\n"),
        Line(name: "id with no value", text: "id\r\n"),
        Line(name: "retry with digits", text: "retry: 3000\n"),
        Line(name: "retry that is not digits, ignored", text: "retry: soon\n"),
        Line(name: "an unknown field", text: "foo: bar\n"),
        Line(name: "a field name is case-sensitive: Data is unknown", text: "Data: x\n"),
        Line(name: "a leading space makes another field name", text: " data: x\n"),
        Line(name: "a line with no colon is a field with no value", text: "datum\n"),
        Line(name: "a blank line with nothing to dispatch (LF)", text: "\n"),
        Line(name: "a blank line with nothing to dispatch (CRLF)", text: "\r\n"),
        Line(name: "a blank line with nothing to dispatch (CR)", text: "\r"),
    ]

    static func feedAll(_ parser: inout ServerSentEventParser, _ text: String, bytewise: Bool) throws -> [ServerSentEvent] {
        guard bytewise else { return try parser.feed(Array(text.utf8)) }
        var events: [ServerSentEvent] = []
        for byte in text.utf8 { events += try parser.feed([byte]) }
        return events
    }

    @Test(arguments: quietLines, [false, true])
    func everyLineThatDispatchesNothingCountsUpToTheBound(_ line: Line, _ bytewise: Bool) throws {
        let repeats = 10
        var parser = ServerSentEventParser(maxBytesWithoutEvent: repeats * line.cost)
        let text = String(repeating: line.text, count: repeats)
        #expect(try Self.feedAll(&parser, text, bytewise: bytewise).isEmpty)
        #expect(parser.bytesWithoutEvent == repeats * line.cost)
        #expect(throws: ServerSentEventParser.Failure.self) { try Self.feedAll(&parser, line.text, bytewise: bytewise) }
    }

    @Test(arguments: quietLines)
    func aDispatchedEventStartsTheCountAfresh(_ line: Line) throws {
        var parser = ServerSentEventParser(maxBytesWithoutEvent: 10 * line.cost)
        // Nine quiet lines, an event, nine more, an event: never past ten between two events.
        let round = String(repeating: line.text, count: 9) + "data: x\n\n"
        var events: [ServerSentEvent] = []
        for _ in 0..<50 { events += try parser.feed(Array(round.utf8)) }
        #expect(events.count == 50 && events.allSatisfy { $0.data == "x" })
        #expect(parser.bytesWithoutEvent == 0)
    }

    @Test func dataLinesAreBoundedByTheEventsSizeNotByTheQuietBound() throws {
        var parser = ServerSentEventParser(maxEventBytes: 1000, maxBytesWithoutEvent: 20)
        #expect(try parser.feed(Array(String(repeating: "data: 0123456789\n", count: 50).utf8)).isEmpty)
        #expect(parser.bytesWithoutEvent == 0)
        #expect(try parser.feed(Array("\n".utf8)).count == 1)
        #expect(throws: ServerSentEventParser.Failure.self) {
            try parser.feed(Array(String(repeating: "data: 0123456789\n", count: 100).utf8))
        }
    }

    @Test func fieldLinesOfAnEventThatCarriesNoDataCountAndItsBlankLineToo() throws {
        // `event: delete` then a blank line: no data, so nothing is dispatched, and all 15 bytes count.
        var parser = ServerSentEventParser(maxBytesWithoutEvent: 15 * 4)
        #expect(try parser.feed(Array(String(repeating: "event: delete\n\n", count: 4).utf8)).isEmpty)
        #expect(parser.bytesWithoutEvent == 60)
        #expect(throws: ServerSentEventParser.Failure.self) { try parser.feed(Array("\n".utf8)) }
    }

    @Test func theFailureSaysWhatCountedInOneSentence() {
        var parser = ServerSentEventParser(maxBytesWithoutEvent: 8)
        #expect {
            _ = try parser.feed(Array("id: 1\nid: 2\n".utf8))
        } throws: { error in
            (error as? ServerSentEventParser.Failure)?.reason
                == "the event stream sent more than 8 bytes without an event (comments, field lines or blank lines that dispatch nothing)"
        }
    }

    /// What keeps a transport's idle clock going: comments, data lines, events; not field lines
    /// or blank lines alone.
    @Test(arguments: [
        (":thump\n", 1), (":\n:\n", 2), ("data: a\n", 1), ("data: a\n\n", 2), ("data: a\ndata: b\n\n", 3),
        ("event: x\n", 0), ("id: 1\n", 0), ("retry: 5\n", 0), ("foo: bar\n", 0), ("datum\n", 0), ("\n\r\n\r", 0),
        ("event: x\nid: 2\n\n", 0),
    ] as [(String, Int)])
    func signsOfLifeAreCommentsDataLinesAndEvents(_ text: String, _ signs: Int) throws {
        var parser = ServerSentEventParser()
        _ = try parser.feed(Array(text.utf8))
        #expect(parser.signsOfLife == signs)
    }
}
