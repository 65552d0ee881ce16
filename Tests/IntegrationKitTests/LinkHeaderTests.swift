import Core
import Foundation
import IntegrationKit
import Synchronization
import Testing

@Suite struct LinkHeaderTests {
    @Test func readsMastodonsLinks() throws {
        let links = try LinkHeader.parse(#"<https://example.social/api/v1/timelines/home?max_id=9>; rel="next", <https://example.social/api/v1/timelines/home?min_id=12>; rel="prev""#)
        #expect(links["next"]?.absoluteString == "https://example.social/api/v1/timelines/home?max_id=9")
        #expect(links["prev"]?.absoluteString == "https://example.social/api/v1/timelines/home?min_id=12")
        #expect(try LinkHeader.parse("").isEmpty)
    }

    @Test func commasInsideAURLDoNotSplitIt() throws {
        let links = try LinkHeader.parse(#"<https://a.example/x?max_id=5&tags=a,b,c>; rel=next, <https://a.example/y?q=1,2>;rel="prev first""#)
        #expect(links["next"]?.absoluteString == "https://a.example/x?max_id=5&tags=a,b,c")
        #expect(links["prev"]?.absoluteString == "https://a.example/y?q=1,2")
        #expect(links["first"] == links["prev"])
    }

    @Test func relativeReferencesResolveAgainstTheRequest() throws {
        let links = try LinkHeader.parse(#"</api/v1/timelines/home?max_id=3>; rel="next""#, base: URL(string: "https://s.example/api/v1/timelines/home?limit=40"))
        #expect(links["next"]?.absoluteString == "https://s.example/api/v1/timelines/home?max_id=3")
    }

    /// An absolute reference is parsed alone, a relative one resolved; either way the link is
    /// what resolving the reference, trimmed of tabs and space separators, against the request
    /// gives, and a reference that gives no URL is an error.
    @Test(arguments: ["https://s.example/api/v1/timelines/home?max_id=3", "HTTP://S.example/x", "a+b.c-d:opaque", "mailto:me@s.example",
                      "/api/v1/timelines/home?max_id=4", "home?max_id=5", "../x", "//other.example/y", "1http://looks.example/like-one",
                      "\u{00A0}https://s.example/nbsp\t", "\t /spaced \u{2003}", "?max_id=6", "#frag"])
    func aReferenceIsWhatResolvingItAgainstTheRequestGives(reference: String) throws {
        let base = URL(string: "https://s.example/api/v1/timelines/home?limit=40")!
        let trimmed = reference.trimmingCharacters(in: .whitespaces)
        guard let expected = URL(string: trimmed, relativeTo: base)?.absoluteURL, expected.scheme != nil else {
            #expect(throws: LinkHeader.ParseError.self) { try LinkHeader.parse("<\(reference)>; rel=next", base: base) }
            return
        }
        let links = try LinkHeader.parse("<\(reference)>; rel=next", base: base)
        #expect(links["next"] == expected)
        #expect(links["next"]?.absoluteString == expected.absoluteString)
    }

    @Test func malformedFieldsAreErrorsThatSayWhere() {
        for field in ["garbage; rel=next", "<https://a.example/x; rel=next", #"<https://a.example/x>; rel="next"#, "<https://a.example/x> junk"] {
            #expect(throws: LinkHeader.ParseError.self, "\(field)") { try LinkHeader.parse(field) }
        }
        do {
            _ = try LinkHeader.parse("<https://a.example/x> \u{1B}[2J")
            Issue.record("a malformed field parsed")
        } catch {
            #expect(error.reason.contains("malformed") && !error.reason.contains("\u{1B}"))
        }
    }

    @Test func anOversizedFieldIsRefusedWithItsSize() {
        let field = String(repeating: "<https://a.example/x>; rel=\"item\", ", count: 6_000)
        #expect(throws: LinkHeader.ParseError.self) { try LinkHeader.parse(field) }
    }
}

@Suite struct RateLimitPacerTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func readsEveryFormOfQuota() {
        let mastodon = HTTPResponse(status: 200, headers: ["X-RateLimit-Limit": "300", "X-RateLimit-Remaining": "0",
                                                           "X-RateLimit-Reset": "2027-01-15T08:05:00.000Z"])
        #expect(RateLimitPacer.quota(in: mastodon, now: now)?.reset == now.addingTimeInterval(300))
        let ietf = HTTPResponse(status: 200, headers: ["RateLimit-Limit": "3000", "RateLimit-Remaining": "12", "RateLimit-Reset": "30"])
        #expect(RateLimitPacer.quota(in: ietf, now: now)?.remaining == 12)
        #expect(RateLimitPacer.quota(in: ietf, now: now)?.reset == now.addingTimeInterval(30))
        let combined = HTTPResponse(status: 200, headers: ["RateLimit": "limit=100, remaining=0, reset=7"])
        #expect(RateLimitPacer.quota(in: combined, now: now)?.reset == now.addingTimeInterval(7))
        for hostile in ["1e300", "-1", "99999999999999999999", "NaN"] {
            let response = HTTPResponse(status: 200, headers: ["X-RateLimit-Remaining": hostile, "X-RateLimit-Reset": hostile])
            #expect(RateLimitPacer.quota(in: response, now: now) == nil || RateLimitPacer.quota(in: response, now: now)?.reset == nil)
        }
    }

    @Test func waitsForTheResetAndSaysSo() async throws {
        let lines = LogLines()
        let pacer = RateLimitPacer(log: Logger(minimum: .debug, handler: lines))
        await pacer.record(HTTPResponse(status: 200, headers: ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "240"]), now: now)
        #expect(try await pacer.turn("reading", now: now) == now.addingTimeInterval(240))
        #expect(lines.all == ["debug quota_wait operation=reading remaining=0 wait_ms=240000",
                              "info notice detail=reading: the server's request quota is spent; waiting 240 s"])
    }

    @Test func aShortWaitIsLoggedAtDebugOnly() async throws {
        let lines = LogLines()
        let pacer = RateLimitPacer(log: Logger(minimum: .debug, handler: lines))
        await pacer.record(HTTPResponse(status: 200, headers: ["X-RateLimit-Limit": "100", "X-RateLimit-Remaining": "4",
                                                               "X-RateLimit-Reset": "2"]), now: now)
        #expect(try await pacer.turn("reading", now: now) == now.addingTimeInterval(0.4))
        #expect(lines.all == ["debug quota_wait operation=reading remaining=4 wait_ms=400"])
    }

    @Test func aResetPastTheCapIsRateLimitedNotASleep() async {
        let pacer = RateLimitPacer(maxWait: 60)
        await pacer.record(HTTPResponse(status: 200, headers: ["RateLimit-Remaining": "0", "RateLimit-Reset": "3600"]), now: now)
        await #expect(throws: Error.self) { try await pacer.turn("reading", now: now) }
    }

    @Test func retryAfterTakesSecondsOrAnHTTPDateWithinADay() {
        #expect(HTTPDate.retryAfter("30", now: now) == now.addingTimeInterval(30))
        #expect(HTTPDate.retryAfter("Fri, 15 Jan 2027 08:00:30 GMT", now: now) == now.addingTimeInterval(30))
        #expect(HTTPDate.retryAfter("1e16", now: now) == nil)
        #expect(HTTPDate.retryAfter("99999999", now: now) == nil)
        #expect(HTTPDate.retryAfter("soon", now: now) == nil)
    }
}

@Suite struct RFC3339Tests {
    @Test func impossibleCalendarDatesAreRejected() {
        #expect(RFC3339.date(from: "2026-02-30T00:00:00Z") == nil)
        #expect(RFC3339.date(from: "2025-02-29T00:00:00Z") == nil)
        #expect(RFC3339.date(from: "2026-04-31T00:00:00Z") == nil)
        #expect(RFC3339.date(from: "2024-02-29T00:00:00Z") != nil)
        #expect(RFC3339.date(from: "2026-11-21T13:30:00.250+02:00") == Date(timeIntervalSince1970: 1_795_260_600.25))
    }
}

@Suite struct RFC3339ParsingTests {
    @Test(arguments: [
        ("1970-01-01T00:00:00Z", 0.0), ("2026-01-01T00:00:37Z", 1_767_225_637), ("2026-01-01T01:00:37+01:00", 1_767_225_637),
        ("2024-02-29T12:00:00.25Z", 1_709_208_000.25), ("2026-01-01t00:00:37z", 1_767_225_637),
    ])
    func validTimesParse(text: String, seconds: Double) {
        #expect(RFC3339.date(from: text) == Date(timeIntervalSince1970: seconds))
    }

    @Test(arguments: ["", "2026-01-01", "2026-13-01T00:00:00Z", "2026-01-01T00:00:00", "2026-01-01T00:00:00+0100",
                      "2026-01-01T24:00:00Z", "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00Zjunk", "２０２６-01-01T00:00:00Z"])
    func invalidTimesDoNot(text: String) {
        #expect(RFC3339.date(from: text) == nil)
    }
}

@Suite struct RateLimitPacerWaitTests {
    @Test func aSpentQuotaWaitsForTheResetBeforeTheNextRequest() async throws {
        let now = Date()
        let pacer = RateLimitPacer()
        let reset = Int(now.timeIntervalSince1970) + 30
        await pacer.record(HTTPResponse(status: 200, headers: ["X-RateLimit-Remaining": "5", "X-RateLimit-Reset": "\(reset)"]), now: now)
        #expect(try await pacer.turn("op", now: now) == now, "quota left: no wait")

        await pacer.record(HTTPResponse(status: 200, headers: ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "\(reset)"]), now: now)
        let waited = try await pacer.turn("op", now: now).timeIntervalSince(now)

        #expect((25...31).contains(waited))
    }

    @Test func aResetTooFarAwayFailsAsRateLimited() async throws {
        let pacer = RateLimitPacer(maxWait: 60)
        await pacer.record(HTTPResponse(status: 200, headers: ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "3600"]))
        let error = await #expect(throws: ServiceError.self) { try await pacer.turn("op") }
        guard case .rateLimited(let until)? = error?.code else { Issue.record("got \(String(describing: error))"); return }
        #expect(until != nil)
    }

    @Test func resetTimesParseAsUnixSecondsSecondsFromNowOrDates() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(RateLimitPacer.resetDate("1800000000", now: now) == Date(timeIntervalSince1970: 1_800_000_000))
        #expect(RateLimitPacer.resetDate("2027-01-15T08:00:00Z", now: now) == Date(timeIntervalSince1970: 1_800_000_000))
        #expect(RateLimitPacer.resetDate("30", now: now) == now.addingTimeInterval(30))
        #expect(RateLimitPacer.resetDate("soon", now: now) == nil)
    }
}

/// Records every event it is handed, as `level event key=value …`.
final class LogLines: LogHandler {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }

    func write(_ level: Logger.Level, _ event: String, _ fields: LogFields) {
        lines.withLock { $0.append(([level.name, event] + fields.map { "\($0.key)=\($0.value)" }).joined(separator: " ")) }
    }
}

final class SleepLog: Sendable {
    private let values = Mutex<[Double]>([])
    func add(_ value: Double) { values.withLock { $0.append(value) } }
    var all: [Double] { values.withLock { $0 } }
}
