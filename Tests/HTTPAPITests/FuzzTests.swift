import Core
import Foundation
@testable import HTTPAPI
import IntegrationKit
import ProcessTestSupport
import Testing

/// Pushes thousands of mutated pages and headers through the HTTP decoding and mapping code:
/// whatever arrives, the answer is a page or a ``ServiceError`` — no crash, no hang, no other error.
@Suite struct HTTPDecodingFuzzTests {
    /// A real recorded page from the demo feed, mutated from here.
    static let seedPage = try! Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/demo-feed/feed-001.json"))

    static let fragments: [String] = [
        "null", "[]", "{}", "\"\"", "0", "-1", "1e400", "true", "\"\\u0000\"", "\"\\ud800\"", "\"2026-13-45T99:99:99Z\"",
        #"{"op":"upsert"}"#, #"{"op":"delete","id":""}"#, #""changes""#, "9223372036854775808", String(repeating: "[", count: 600),
    ]

    /// The time limit catches a mutation that makes the decoder loop; it is no speed bound (a
    /// few seconds alone, longer beside the whole suite on two cores).
    @Test(.timeLimit(.minutes(10))) func mutatedPagesAndHeadersYieldAPageOrATypedError() async throws {
        var random = SeededRandom(state: 20261121)
        var outcomes = (pages: 0, errors: [ServiceError.Code: Int]())
        for _ in 0..<4000 {
            let body = mutate(Self.seedPage, &random)
            let statuses = [200, 200, 200, 200, 304, 400, 401, 404, 418, 429, 500, 503, 302]
            let status = statuses[Int(random.next() % UInt64(statuses.count))]
            var headers = ["Content-Type": "application/json"]
            if random.next() % 3 == 0 { headers["ETag"] = String(decoding: (0..<Int(random.next() % 12)).map { _ in UInt8(random.next() % 256) }, as: UTF8.self) }
            if random.next() % 3 == 0 { headers["Retry-After"] = ["", "-5", "1e308", "abc", "Wed, 99 Foo 2026", "30"][Int(random.next() % 6)] }
            if random.next() % 4 == 0 { headers["X-RateLimit-Remaining"] = ["0", "-1", "x"][Int(random.next() % 3)]; headers["X-RateLimit-Reset"] = "1" }
            let transport = ScriptedTransport([HTTPResponse(status: status, headers: headers, body: body)])
            let (posts, _, _) = makeService(transport)
            let cursor = random.next() % 2 == 0 ? nil : FeedCursor(position: "5", validator: "\"v5\"")
            do {
                let page = try await posts.page(after: cursor, session: session)
                outcomes.pages += 1
                #expect(page.nextCursor?.position.isEmpty == false)
            } catch let error as ServiceError {
                outcomes.errors[error.code, default: 0] += 1
                #expect(!error.description.isEmpty)
            } catch {
                Issue.record("an untyped error escaped: \(type(of: error)): \(error)")
            }
        }
        #expect(outcomes.pages > 100, "some mutations still decode: \(outcomes)")
        #expect(outcomes.errors[.invalidResponse, default: 0] > 100, "many are invalid responses: \(outcomes)")
    }

    private func mutate(_ data: Data, _ random: inout SeededRandom) -> Data {
        var bytes = [UInt8](data)
        for _ in 0...(random.next() % 4) where !bytes.isEmpty {
            let at = Int(random.next() % UInt64(bytes.count))
            switch random.next() % 6 {
            case 0: bytes[at] ^= UInt8(1 << (random.next() % 8))                      // flip a bit
            case 1: bytes.removeSubrange(at...)                                         // truncate
            case 2: bytes.removeSubrange(at..<min(bytes.count, at + Int(random.next() % 64)))  // drop a run
            case 3: bytes.insert(contentsOf: Self.fragments[Int(random.next() % UInt64(Self.fragments.count))].utf8, at: at)
            case 4: bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + Int(random.next() % 200))], at: at)  // repeat a run
            default: bytes[at] = [UInt8(ascii: "\""), UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0xFF, 0][Int(random.next() % 6)]
            }
        }
        return Data(bytes)
    }
}

