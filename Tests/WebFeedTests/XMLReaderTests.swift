import Foundation
import Testing
@testable import WebFeed

/// The reader's bounds, which the public entry points cannot shrink: cancellation in the
/// middle of a parse, the CPU bound, and the attribute scan across chunk boundaries.
@Suite struct XMLReaderTests {
    /// Counts elements, and cancels its own task at the element it is told to.
    final class Counter: XMLReaderDelegate {
        var started = 0
        let cancelAt: Int
        init(cancelAt: Int = .max) { self.cancelAt = cancelAt }
        func reader(_ reader: XMLReader, didStartElement name: String, namespace: String, attributes: [String: String]) {
            started += 1
            if started == cancelAt { withUnsafeCurrentTask { $0?.cancel() } }
        }
        func reader(_ reader: XMLReader, didEndElement name: String, namespace: String) {}
        func reader(_ reader: XMLReader, foundText text: String) {}
    }

    static func bigDocument(items: Int) -> Data {
        var xml = "<rss version=\"2.0\"><channel>"
        for index in 0..<items { xml += "<item><guid>\(index)</guid><title>Item \(index)</title></item>" }
        return Data((xml + "</channel></rss>").utf8)
    }

    @Test func aParseCancelledMidwayStopsWithinAChunk() async throws {
        let data = Self.bigDocument(items: 200_000)  // about 10 MB, 600,000 elements
        let (outcome, seen) = await Task {
            let counter = Counter(cancelAt: 1_000)
            let outcome = Result { try XMLReader.read(data, into: counter) }
            return (outcome, counter.started)
        }.value
        #expect(throws: CancellationError.self) { try outcome.get() }
        // One 64 KiB chunk holds about 4,000 elements of this shape; the parse stops after the
        // chunk in which the task was cancelled.
        #expect(seen >= 1_000 && seen < 1_000 + 5_000, "\(seen) elements read")
    }

    @Test func theCPUBoundStopsAParseWithASentence() throws {
        var limits = XMLReader.Limits()
        limits.cpuSeconds = 0
        let error = try #require(throws: WebFeedParseError.self) {
            try XMLFeedParser.parse(Self.bigDocument(items: 10_000), feedURL: nil, limits: limits)
        }
        #expect(error.reason.contains("seconds of CPU to read"), "\(error)")
        #expect(throws: Never.self) { try XMLFeedParser.parse(Self.bigDocument(items: 10_000), feedURL: nil) }
    }

    @Test func theAttributeCountHoldsAcrossChunkBoundaries() throws {
        var limits = XMLReader.Limits()
        limits.chunkBytes = 7
        limits.maxAttributes = 3
        func read(_ xml: String) throws { try XMLReader.read(Data(xml.utf8), into: Counter(), limits: limits) }
        #expect(throws: WebFeedParseError.self) { try read("<rss><x a='1' b=\"2\" c='>' d='4'/></rss>") }
        #expect(throws: Never.self) { try read("<rss><x a='1' b=\"2\" c='>'/><y a='1' b='2' c='3'/></rss>") }
        #expect(throws: Never.self) {
            try read("<?xml version='1.0'?><!-- a=1 b=2 c=3 d=4 --><rss><![CDATA[<x a=1 b=2 c=3 d=4>]]><?pi a=1 b=2 c=3 d=4?></rss>")
        }
    }
}
