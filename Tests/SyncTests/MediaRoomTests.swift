import Core
import Foundation
@testable import Sync
import Testing

/// What goes when the archive is over `maxBytes`: the oldest unstarred media of the largest feeds first.
@Suite struct MediaRoomTests {
    func holding(_ name: String, _ feed: String, day: Double, bytes: Int64 = 100, digest: String? = nil, starred: Bool = false) -> MediaHolding {
        MediaHolding(url: URL(string: "https://m.example/\(name)")!, digest: digest ?? name, bytes: bytes, feed: feed,
                     postedAt: Date(timeIntervalSince1970: day * 86_400), starred: starred)
    }

    @Test func theLargestFeedsOldestUnstarredMediaGoesFirst() {
        let holdings = [holding("big-old", "big", day: 1, starred: true), holding("big-mid", "big", day: 2), holding("big-new", "big", day: 3),
                        holding("small-old", "small", day: 0)]
        let gone = MediaRoom.evictions(from: holdings, total: 400, maxBytes: 250)
        #expect(gone.map(\.lastPathComponent) == ["big-mid", "big-new"], "big holds 300 bytes, small 100; big-old is starred")
    }

    @Test func underTheBoundNothingGoesAndAFileSharedByTwoAddressesFreesItsBytesWithTheLast() {
        #expect(MediaRoom.evictions(from: [holding("a", "f", day: 1)], total: 100, maxBytes: 100).isEmpty)
        let shared = [holding("a", "f", day: 1, digest: "d"), holding("b", "f", day: 2, digest: "d"), holding("c", "f", day: 3)]
        let gone = MediaRoom.evictions(from: shared, total: 200, maxBytes: 150)
        #expect(gone.map(\.lastPathComponent) == ["a", "b"], "a alone frees nothing: b holds the same bytes")
    }

    @Test func whenOnlyStarredMediaIsLeftNothingMoreGoes() {
        let gone = MediaRoom.evictions(from: [holding("a", "f", day: 1, starred: true), holding("b", "f", day: 2)], total: 200, maxBytes: 50)
        #expect(gone.map(\.lastPathComponent) == ["b"])
    }
}
