import Core
import Foundation
import IntegrationKit
@testable import Mastodon
import ProcessTestSupport
import Testing

/// Mutations of a real page through the decoder, the mapping and the post service: whatever
/// arrives, the answer is a page or a ``ServiceError``, never a crash or another error.
@Suite struct MastodonDecodingFuzzTests {
    static let fragments: [String] = [
        "null", "[]", "{}", "\"\"", "0", "-1", "1e300", "1e400", "2.5", "true", "\"\\u0000\"", "\"\\ud800\"", "\"javascript:x\"",
        "\"2026-13-45T99:99:99Z\"", #""id""#, #""account""#, #""reblog":{"#, #""media_attachments":[{"#, "9223372036854775808",
        String(repeating: "[", count: 600), String(repeating: "{\"reblog\":", count: 50),
    ]

    func mutate(_ data: Data, _ random: inout SeededRandom) -> Data {
        var bytes = [UInt8](data)
        // Half the time only values change, so the body mostly stays JSON and the checks of
        // single statuses get their turn; otherwise the bytes themselves are broken.
        if random.next() % 2 == 0 {
            for _ in 0...(random.next() % 3) {
                replaceValue(after: Int(random.next() % UInt64(bytes.count)), in: &bytes,
                             with: Self.fragments[Int(random.next() % UInt64(Self.fragments.count))])
            }
            return Data(bytes)
        }
        for _ in 0...(random.next() % 4) where !bytes.isEmpty {
            let at = Int(random.next() % UInt64(bytes.count))
            switch random.next() % 7 {
            case 0: bytes[at] ^= UInt8(1 << (random.next() % 8))
            case 1: bytes.removeSubrange(at...)
            case 2: bytes.removeSubrange(at..<min(bytes.count, at + Int(random.next() % 64)))
            case 3: bytes.insert(contentsOf: Self.fragments[Int(random.next() % UInt64(Self.fragments.count))].utf8, at: at)
            case 4: bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + Int(random.next() % 400))], at: at)
            case 5: bytes[at] = [UInt8(ascii: "\""), UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0xFF, 0][Int(random.next() % 6)]
            default: replaceValue(after: at, in: &bytes, with: Self.fragments[Int(random.next() % UInt64(Self.fragments.count))])
            }
        }
        return Data(bytes)
    }

    /// Replaces the first plain value (a string, number or literal) after `start` with
    /// `fragment`: the body stays JSON more often, so the per-status checks get their turn.
    func replaceValue(after start: Int, in bytes: inout [UInt8], with fragment: String) {
        guard let colon = bytes[start...].firstIndex(of: UInt8(ascii: ":")) else { return }
        var end = colon + 1
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            end += 1
            while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1 }
            end = min(end + 1, bytes.count)
        } else {
            while end < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: "{"), UInt8(ascii: "[")].contains(bytes[end]) {
                end += 1
            }
        }
        bytes.replaceSubrange((colon + 1)..<end, with: fragment.utf8)
    }

    /// The time limit catches a mutation that makes the decoder loop; it is no speed bound (a
    /// few seconds alone, longer beside the whole suite on two cores).
    @Test(.timeLimit(.minutes(10))) func mutatedPagesYieldAPageOrATypedError() async throws {
        var random = SeededRandom(state: 20261122)
        var outcomes = (pages: 0, skipped: 0, failed: 0)
        for _ in 0..<1000 {
            let body = mutate(recordedPage, &random)
            do {
                let page = try MastodonTimelineResponse(body: body)
                let items = page.items
                let mapped = page.mapped()
                #expect(mapped.posts.count + mapped.skipped.count == items.count, "every status is a post or a skipped item")
                #expect(mapped.skipped.allSatisfy { !$0.reason.isEmpty })
                outcomes.pages += 1
                outcomes.skipped += mapped.skipped.count
            } catch is JSONReader.SyntaxError {
                outcomes.failed += 1
            } catch is JSONReader.FieldError {
                outcomes.failed += 1
            } catch {
                Issue.record("an untyped error escaped: \(type(of: error)): \(error)")
            }
            let service = makePostService([HTTPResponse(status: 200, body: body)])
            do {
                _ = try await service.page(after: nil, session: Session(accessToken: Secret("tok")))
            } catch let error as ServiceError {
                #expect(error.code == .invalidResponse)
            } catch {
                Issue.record("the service let an untyped error escape: \(type(of: error)): \(error)")
            }
        }
        #expect(outcomes.pages > 100 && outcomes.skipped > 50 && outcomes.failed > 100, "\(outcomes)")
    }
}

