import Foundation
@testable import SQLiteCache
import Testing

/// The `video_ids` and `labels` columns: the fast split reads what JSONDecoder reads.
@Suite struct JSONStringArrayTests {
    @Test func decodeAgreesWithJSONDecoderOnWhatEncodeWritesAndOnOtherToolsJSON() throws {
        let lists: [[String]] = [[], [""], ["", ""], ["a"], ["vid-0153", "vid-7"], ["a,b", "c\"d", "e\\f", "\u{301}x", "x\u{301}", "\n", "é🎉"],
                                 ["\"", "\",\""], [",", "[", "]"]]
        for list in lists {
            #expect(JSONStringArray.decode(JSONStringArray.encode(list)) == list, "\(list)")
        }
        let foreign = [#"["a", "b"]"#, #"[ "a" ]"#, #"["a","b" ]"#, #"["]"#, #"["a"]x"#, #"["\u0041"]"#, "[1,2]", "{}", "", "[\"a\",\"b\"]"]
        for json in foreign {
            let decoded = (try? JSONDecoder().decode([String].self, from: Data(json.utf8))) ?? []
            #expect(JSONStringArray.decode(json) == decoded, "\(json)")
        }
    }
}
