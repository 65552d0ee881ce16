import Foundation
import IntegrationKit
import Testing

/// The WHATWG HTML standard's server-sent events interpretation, case by case (§9.2.6), with
/// the standard's own examples, then the parser's bounds.
@Suite struct ServerSentEventParserTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var stream: String
        var events: [ServerSentEvent]
        var testDescription: String { name }
    }

    static let table: [Case] = [
        Case(name: "the standard's stock example: data lines join with LF", stream: "data: YHOO\ndata: +2\ndata: 10\n\n",
             events: [.init(data: "YHOO\n+2\n10")]),
        Case(name: "the standard's id example: a comment, ids that persist and reset, one space dropped",
             stream: ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n",
             events: [.init(data: "first event", lastEventID: "1"), .init(data: "second event"), .init(data: " third event")]),
        Case(name: "the standard's empty-data example: the unfinished last event is dropped",
             stream: "data\n\ndata\ndata\n\ndata:", events: [.init(data: ""), .init(data: "\n")]),
        Case(name: "the standard's space example: one optional space after the colon",
             stream: "data:test\n\ndata: test\n\n", events: [.init(data: "test"), .init(data: "test")]),
        Case(name: "event names the type, reset after each dispatch", stream: "event: update\ndata: {}\n\ndata: x\n\n",
             events: [.init(type: "update", data: "{}"), .init(data: "x")]),
        Case(name: "an event without data is not dispatched, and its type does not leak",
             stream: "event: delete\n\ndata: y\n\n", events: [.init(data: "y")]),
        Case(name: "CRLF and lone CR end lines too", stream: "data: a\r\ndata: b\rdata: c\r\n\r\r\n",
             events: [.init(data: "a\nb\nc")]),
        Case(name: "a leading BOM is skipped", stream: "\u{FEFF}data: bom\n\n", events: [.init(data: "bom")]),
        Case(name: "a BOM later is part of the field name, so the field is ignored",
             stream: "data: 1\n\n\u{FEFF}data: 2\n\n", events: [.init(data: "1")]),
        Case(name: "an id containing NUL is ignored", stream: "id: 7\ndata: a\n\nid: 8\u{0}\ndata: b\n\n",
             events: [.init(data: "a", lastEventID: "7"), .init(data: "b", lastEventID: "7")]),
        Case(name: "unknown fields and fields with no colon are ignored", stream: "foo: bar\ndata\nretry: x\nevent\n\n",
             events: [.init(data: "")]),
        Case(name: "Mastodon's keep-alives are comments", stream: ":)\n:thump\n:thump\nevent: delete\ndata: 1099\n\n",
             events: [.init(type: "delete", data: "1099")]),
        Case(name: "colons after the first stay in the value", stream: "data: a: b:c\n\n", events: [.init(data: "a: b:c")]),
    ]

    @Test(arguments: table) func interpretsTheStreamAsTheStandardSays(_ example: Case) throws {
        var whole = ServerSentEventParser()
        #expect(try whole.feed(Array(example.stream.utf8)) == example.events)
        // Any split of the bytes gives the same events: here, one byte at a time.
        var bytewise = ServerSentEventParser()
        var events: [ServerSentEvent] = []
        for byte in example.stream.utf8 { events += try bytewise.feed([byte]) }
        #expect(events == example.events)
    }

    @Test func aCROfOneChunkAndAnLFOfTheNextAreOneLineEnd() throws {
        var parser = ServerSentEventParser()
        #expect(try parser.feed(Array("data: a\r".utf8)).isEmpty)
        #expect(try parser.feed(Array("\ndata: b\r".utf8)).isEmpty)
        #expect(try parser.feed(Array("\n\r\n".utf8)) == [.init(data: "a\nb")])
    }

    @Test func retryTakesASCIIDigitsOnly() throws {
        var parser = ServerSentEventParser()
        _ = try parser.feed(Array("retry: 2500\n".utf8))
        #expect(parser.retryMilliseconds == 2500)
        _ = try parser.feed(Array("retry: 3s\nretry: -1\n".utf8))
        #expect(parser.retryMilliseconds == 2500)
    }

    @Test func invalidUTF8BecomesReplacementCharacters() throws {
        var parser = ServerSentEventParser()
        #expect(try parser.feed([UInt8]("data: a".utf8) + [0xFF] + [UInt8]("\n\n".utf8)) == [.init(data: "a\u{FFFD}")])
    }

    @Test func aLineLongerThanTheBoundStopsTheParser() {
        var parser = ServerSentEventParser(maxEventBytes: 64)
        #expect(throws: ServerSentEventParser.Failure.self) { try parser.feed(Array(("data: " + String(repeating: "x", count: 80)).utf8)) }
    }

    @Test func anEventWhoseDataLinesAddUpPastTheBoundStopsTheParser() throws {
        var parser = ServerSentEventParser(maxEventBytes: 64)
        _ = try parser.feed(Array(String(repeating: "data: 0123456789\n", count: 5).utf8))
        #expect(throws: ServerSentEventParser.Failure.self) { try parser.feed(Array("data: 0123456789\n".utf8)) }
    }

    @Test func endlessCommentsStopTheParserButAnEventResetsTheCount() throws {
        var parser = ServerSentEventParser(maxBytesWithoutEvent: 70)
        _ = try parser.feed(Array(String(repeating: ":thump\n", count: 10).utf8))
        #expect(try parser.feed(Array("data: x\n\n".utf8)).count == 1)
        _ = try parser.feed(Array(String(repeating: ":thump\n", count: 10).utf8))
        #expect(throws: ServerSentEventParser.Failure.self) { try parser.feed(Array(":thump\n".utf8)) }
    }

    @Test func memoryStaysBoundedOverManyEvents() throws {
        var parser = ServerSentEventParser(maxEventBytes: 1 << 10)
        let chunk = Array(String(repeating: "event: update\ndata: {\"id\":\"1\"}\n\n", count: 1000).utf8)
        var total = 0
        for _ in 0..<20 { total += try parser.feed(chunk).count }
        #expect(total == 20_000)
    }
}
