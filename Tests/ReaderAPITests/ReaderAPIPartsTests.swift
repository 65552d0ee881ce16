import Core
import Foundation
@testable import ReaderAPI
import Testing

/// The reader API's parts that need no listener: item ids, continuations, form fields and the
/// login slow-down, each with the cases a hostile client would send.
@Suite struct ReaderAPIPartsTests {
    @Test func itemIDsReadBothFormsAndRefuseTheRest() throws {
        let id = ItemID(feed: "home", post: "p0000042")
        #expect(id.value <= UInt64(Int64.max))
        #expect(id.long.hasPrefix("tag:google.com,2005:reader/item/") && id.long.count == ItemID.longPrefix.count + 16)
        #expect(ItemID(parsing: id.long) == id && ItemID(parsing: id.short) == id)
        #expect(ItemID(feed: "home", post: "p0000042") == id, "the same post, the same id")
        #expect(ItemID(feed: "other", post: "p0000042") != id && ItemID(feed: "home", post: "p0000043") != id)
        for bad in ["", "-1", "abc", "1.5", "99999999999999999999", ItemID.longPrefix + "xyz", ItemID.longPrefix + "ffffffffffffffff",
                    ItemID.longPrefix + "0123", " 12", "１２"] {
            #expect(ItemID(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test func aContinuationIsOursOrRefused() {
        let feeds = [ServedFeed(name: "home"), ServedFeed(name: "café ü")]
        let position = StoredPost.ListingPosition(createdAt: Date(timeIntervalSince1970: 1_700_000_000.123), feed: "café ü", id: "p\n1")
        let text = Continuation.make(position)
        #expect(Continuation.parse(text, feeds: feeds).map { $0.0 == position && !$0.oldestFirst } == true)
        let oldest = Continuation.make(position, oldestFirst: true)
        #expect(oldest.hasPrefix("o1") && Continuation.parse(oldest, feeds: feeds).map { $0.0 == position && $0.oldestFirst } == true)
        #expect(Continuation.parse(text, feeds: [ServedFeed(name: "home")]) == nil, "a feed no longer served")
        let hugeTime: String = "c1" + Array("9999999999999999999\nhome\np".utf8).map { String(format: "%02x", $0) }.joined()
        let tail = String(text.dropFirst(2))
        let bads: [String] = ["", "c1", "c1z", "c1zz", "c2" + tail, "o2" + tail, String(text.dropLast()),
                              "c1" + String(repeating: "00", count: 3_000), "c1" + "2d310a686f6d650a70", "c1" + "310a686f6d650a", hugeTime]
        for bad in bads {
            #expect(Continuation.parse(bad, feeds: feeds) == nil, "\(bad.prefix(40))")
        }
    }

    @Test func aStreamRequestReadsItsOrderAndBoundsAndRefusesTheRest() throws {
        let feeds = [ServedFeed(name: "home", group: "Friends")]
        func parse(_ query: String) -> Result<StreamRequest, StreamError> {
            StreamRequest.parse(FormFields(query)!, stream: nil, feeds: feeds, defaultCount: 20)
        }
        let oldest = try parse("s=feed%2Fhome&r=o&ot=100&nt=200&n=5&xt=user%2F-%2Fstate%2Fcom.google%2Fread").get().query
        #expect(oldest.oldestFirst && oldest.feed == "home" && oldest.limit == 5 && oldest.unreadOnly)
        #expect(oldest.since == Date(timeIntervalSince1970: 100) && oldest.until == Date(timeIntervalSince1970: 200))
        #expect(try !parse("r=n").get().query.oldestFirst && !parse("r=d").get().query.oldestFirst && !parse("").get().query.oldestFirst)
        let position = StoredPost.ListingPosition(createdAt: Date(timeIntervalSince1970: 150), feed: "home", id: "p1")
        let newestC = Continuation.make(position), oldestC = Continuation.make(position, oldestFirst: true)
        #expect(try parse("r=o&c=\(oldestC)").get().query.continuing == position)
        #expect(try parse("c=\(newestC)").get().query.continuing == position)
        for bad in ["r=x", "r=", "r=o&c=\(newestC)", "c=\(oldestC)", "nt=-1", "nt=1e9", "ot=9999999999999", "n=0", "n=10001",
                    "xt=user%2F-%2Fstate%2Fcom.google%2Fstarred", "it=user%2F-%2Fstate%2Fcom.google%2Fread", "s=feed%2Fother",
                    "s=user%2F-%2Flabel%2FNobody", "c=c1zz"] {
            guard case .failure(let error) = parse(bad) else { Issue.record("\(bad) was taken"); continue }
            #expect(!error.line.contains("\n") && !error.line.isEmpty, "\(bad)")
        }
    }

    @Test func formFieldsAreDecodedAndBounded() throws {
        let fields = try #require(FormFields("i=1&i=2&a=user%2F-%2Fstate&T=a+b&empty=&bare"))
        #expect(fields.all("i") == ["1", "2"] && fields["a"] == "user/-/state" && fields["T"] == "a b")
        #expect(fields["empty"] == "" && fields["bare"] == "" && fields["none"] == nil)
        #expect(FormFields("a=%ZZ") == nil && FormFields("a=%FF") == nil)
        #expect(FormFields(Array(repeating: "i=1", count: FormFields.limit + 1).joined(separator: "&")) == nil)
        #expect(FormFields(Array(repeating: "i=1", count: FormFields.limit).joined(separator: "&"))?.all("i").count == FormFields.limit)
    }

    @Test func failedLoginsAreSlowedPerAddressAndPerName() async {
        #expect(LoginThrottle.delay(afterFailures: 0) == .zero)
        #expect((1...7).map(LoginThrottle.delay(afterFailures:)) == [500, 1_000, 2_000, 4_000, 8_000, 8_000, 8_000].map { .milliseconds($0) })
        let throttle = LoginThrottle()
        #expect(await throttle.failed(address: "10.0.0.1", name: "ada") == .milliseconds(500))
        #expect(await throttle.failed(address: "10.0.0.1", name: "bob") == .milliseconds(1_000), "the address counts across names")
        #expect(await throttle.delay(address: "10.0.0.2", name: "ada") == .milliseconds(500), "the name counts across addresses")
        #expect(await throttle.delay(address: "10.0.0.2", name: "eve") == .zero)
        await throttle.succeeded(address: "10.0.0.1", name: "ada")
        #expect(await throttle.delay(address: "10.0.0.1", name: "ada") == .zero)
        #expect(await throttle.delay(address: "10.0.0.3", name: "bob") == .milliseconds(500))
        for index in 0..<(LoginThrottle.capacity + 10) { _ = await throttle.failed(address: "a\(index)", name: "n\(index % 3)") }
        #expect(await throttle.failures(ofAddress: "a0") == 0, "the oldest are forgotten past the capacity")
        #expect(await throttle.failures(ofAddress: "a\(LoginThrottle.capacity + 9)") == 1)
    }
}
