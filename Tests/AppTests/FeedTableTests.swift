@testable import App
import ProcessTestSupport
import Testing

/// The metrics registry's table of feeds against a plain dictionary, over seeded random sets,
/// replacements and removals (a removal moves the last feed into the hole).
@Suite struct FeedTableTests {
    @Test(arguments: [1, 2, 3])
    func theTableHoldsWhatADictionaryHolds(_ seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var table = FeedTable<Int>()
        var model: [String: Int] = [:]
        for step in 0..<20_000 {
            let name = "feed-\(random.next(below: 300))"
            if random.next(below: 3) == 0 {
                table[name] = nil
                model[name] = nil
            } else {
                table[name] = step
                model[name] = step
            }
            if step % 997 == 0 {
                #expect(table.feeds.sorted() == model.keys.sorted())
                #expect(model.allSatisfy { table[$0.key] == $0.value })
            }
        }
        #expect(table.feeds.count == model.count && model.allSatisfy { table[$0.key] == $0.value })
        #expect(table["never"] == nil)
    }
}
