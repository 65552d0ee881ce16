import Foundation
import IntegrationKit
import Testing

/// The one date parser against the RFCs' own grammar and examples.
@Suite struct InternetDateTests {
    // RFC 3339 §5.8's examples, then §5.6's grammar case by case: (text, seconds since 1970 or nil).
    static let rfc3339: [(String, Double?)] = [
        ("1985-04-12T23:20:50.52Z", 482_196_050.52),
        ("1996-12-19T16:39:57-08:00", 851_042_397),
        ("1990-12-31T23:59:60Z", 662_687_999),           // a leap second reads as second 59
        ("1990-12-31T15:59:60-08:00", 662_687_999),
        ("1937-01-01T12:00:27.87+00:20", -1_041_337_172.13),
        ("1985-04-12t23:20:50z", 482_196_050), ("1985-04-12 23:20:50Z", 482_196_050),
        ("2000-02-29T00:00:00Z", 951_782_400),
        ("2026-01-01T00:00:00+23:59", 1_767_139_260), ("2026-01-01T00:00:00-23:59", 1_767_311_940),
        // time-numoffset: hour 00-23, minute 00-59
        ("2026-01-01T00:00:00+24:00", nil), ("2026-01-01T00:00:00+25:00", nil), ("2026-01-01T00:00:00-99:99", nil),
        ("2026-01-01T00:00:00+00:60", nil), ("2026-01-01T00:00:00+0100", nil), ("2026-01-01T00:00:00+01", nil),
        // date-mday per month and year (§5.7)
        ("2026-02-29T00:00:00Z", nil), ("2025-02-29T00:00:00Z", nil), ("1900-02-29T00:00:00Z", nil), ("2026-04-31T00:00:00Z", nil),
        ("2026-13-01T00:00:00Z", nil), ("2026-00-01T00:00:00Z", nil), ("2026-01-00T00:00:00Z", nil),
        // partial-time ranges
        ("2026-01-01T24:00:00Z", nil), ("2026-01-01T00:60:00Z", nil), ("2026-01-01T00:00:61Z", nil),
        // what the grammar lacks
        ("2026-01-01T00:00:00", nil), ("2026-01-01T00:00Z", nil), ("2026-01-01", nil), ("2026-01-01T00:00:00.Z", nil),
        ("2026-1-01T00:00:00Z", nil), ("26-01-01T00:00:00Z", nil), ("2026-01-01T00:00:00Z ", nil), ("2026-01-01X00:00:00Z", nil),
        ("", nil), ("not-a-date", nil), ("2026-01-01T00:00:00,5Z", nil),
    ]

    @Test(arguments: rfc3339) func rfc3339Case(_ text: String, _ seconds: Double?) throws {
        let date = InternetDate.rfc3339(text)
        #expect(date.map { abs($0.timeIntervalSince1970 - (seconds ?? .nan)) < 0.0005 } ?? (seconds == nil), "\(text) → \(String(describing: date))")
        #expect(RFC3339.date(from: text) == date)
    }

    // RFC 2822 Appendix A's dates, RFC 822 §5's forms and RFC 2822 §4.3's obsolete ones.
    static let rfc822: [(String, Double?)] = [
        ("Fri, 21 Nov 1997 09:55:06 -0600", 880_127_706),          // A.1.1
        ("Thu, 13 Feb 1969 23:32:54 -0330", -27_723_426),          // A.5
        ("21 Nov 97 09:55:06 GMT", 880_106_106),                   // A.6.2, two-digit year
        ("Fri, 21 Nov 1997 09:55:06 +0000 (UTC)", 880_106_106),    // a trailing comment
        ("26 Aug 76 14:29 EDT", 209_932_140),                      // RFC 822 §5: no seconds, a US zone
        ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777),            // RFC 9110's IMF-fixdate
        ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777),           // RFC 850
        ("Sun Nov  6 08:49:37 1994", 784_111_777),                 // asctime
        ("6 Nov 1994 08:49:37 UT", 784_111_777), ("6 Nov 1994 08:49:37 utc", 784_111_777), ("6 Nov 1994 08:49:37 Z", 784_111_777),
        ("6 Nov 1994 08:49:37", 784_111_777),                      // no zone: GMT
        ("6 Nov 1994 03:49:37 EST", 784_111_777), ("6 Nov 1994 04:49:37 EDT", 784_111_777), ("6 Nov 1994 02:49:37 CST", 784_111_777),
        ("6 Nov 1994 03:49:37 CDT", 784_111_777), ("6 Nov 1994 01:49:37 MST", 784_111_777), ("6 Nov 1994 02:49:37 MDT", 784_111_777),
        ("6 Nov 1994 00:49:37 PST", 784_111_777), ("6 Nov 1994 01:49:37 PDT", 784_111_777),
        ("6 Nov 1994 08:49:37 A", 784_111_777), ("6 Nov 1994 08:49:37 z", 784_111_777), ("6 Nov 1994 08:49:37 Y", 784_111_777),
        ("6 Nov 1994 08:49:37 J", nil),                            // J is no zone
        ("6 November 1994 8:49:37 GMT", 784_111_777),              // a full month name, a one-digit hour
        ("Sun., 06 Nov 1994 08:49:37 GMT", 784_111_777), ("Sun,06 Nov 1994 08:49:37 GMT", 784_111_777),
        ("1 Jan 49 00:00 GMT", 2_493_072_000), ("1 Jan 50 00:00 GMT", -631_152_000), ("1 Jan 099 00:00 GMT", 915_148_800),  // §4.3
        ("6 Nov 1994 08:49:37 +2359", 784_111_777 - 86_340), ("6 Nov 1994 08:49:37 +01:00", 784_108_177),
        // offsets beyond ±23:59, minutes of 60 or more
        ("6 Nov 1994 08:49:37 +2500", nil), ("6 Nov 1994 08:49:37 -9999", nil), ("6 Nov 1994 08:49:37 +25:00", nil),
        ("6 Nov 1994 08:49:37 +0060", nil), ("6 Nov 1994 08:49:37 +2400", nil), ("6 Nov 1994 08:49:37 +100", nil),
        // the calendar
        ("29 Feb 2026 00:00 GMT", nil), ("31 Apr 2026 00:00 GMT", nil), ("29 Feb 1900 00:00 GMT", nil), ("32 Jan 2026 00:00 GMT", nil),
        ("1 Jan 1899 00:00 GMT", nil), ("6 Nov 1994 24:00 GMT", nil), ("6 Nov 1994 08:60 GMT", nil), ("6 Nov 1994 08:49:61 GMT", nil),
        // not dates
        ("6 Foo 1994 08:49:37 GMT", nil), ("6 Nov 1994 GMT", nil), ("6 Nov 1994 08:49:37 XYZ", nil), ("6 Nov 1994 08:49:37 GMT x", nil),
        ("yesterday", nil), ("", nil), ("6 Nov 1994 08:49:37 (open", nil), ("Sun, 06 Nov 19945 08:49:37 GMT", nil),
    ]

    @Test(arguments: rfc822) func rfc822Case(_ text: String, _ seconds: Double?) {
        let date = InternetDate.rfc822(text)
        #expect(date?.timeIntervalSince1970 == seconds, "\(text) → \(String(describing: date))")
        #expect(InternetDate.feedDate(text) == date, "a feed reads RFC 822 the same")
    }

    // The ISO 8601 forms feeds write beside RFC 3339.
    static let feedForms: [(String, Double?)] = [
        ("2026-02-03T14:30:00Z", 1_770_129_000), ("2026-02-03", 1_770_076_800), ("2026-02-03T14:30Z", 1_770_129_000),
        ("2026-02-03T14:30:00", 1_770_129_000), ("2026-02-03T15:30:00+0100", 1_770_129_000), ("2026-02-03T15:30+01", 1_770_129_000),
        ("2026-02-03T14:30:00,000Z", 1_770_129_000),
        ("2026-02-03T14:30:00+25:00", nil), ("2026-02-03T14:30:00+2500", nil), ("2026-02-03T14:30:00-9999", nil),
        ("2026-02-03T14:30:00+00:60", nil), ("2026-02-30", nil), ("1899-12-31", nil), ("2026-02-03T14:30:00Zjunk", nil),
    ]

    @Test(arguments: feedForms) func feedFormCase(_ text: String, _ seconds: Double?) {
        #expect(InternetDate.feedDate(text)?.timeIntervalSince1970 == seconds, "\(text)")
    }

    @Test func httpDatesGoThroughTheSameParser() {
        #expect(HTTPDate.date(from: "Sun, 06 Nov 1994 08:49:37 GMT")?.timeIntervalSince1970 == 784_111_777)
        #expect(HTTPDate.date(from: "Sun, 06 Nov 1994 08:49:37 +2500") == nil)
    }
}
