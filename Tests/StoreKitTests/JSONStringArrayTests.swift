import Foundation
@testable import StoreKit
import Testing

/// The `video_ids` and `labels` columns: the fast split reads what JSONDecoder reads.
@Suite struct JSONStringArrayTests {
    @Test func decodeAgreesWithJSONDecoderOnWhatEncodeWritesAndOnOtherToolsJSON() throws {
        let lists: [[String]] = [[], [""], ["", ""], ["a"], ["vid-0153", "vid-7"], ["a,b", "c\"d", "e\\f", "\u{301}x", "x\u{301}", "\n", "é🎉"],
                                 ["\"", "\",\""], [",", "[", "]"]]
        for list in lists {
            #expect(JSONStringArray.decode(JSONStringArray.encode(list, dialect: .sqlite)) == list, "\(list)")
            #expect(JSONStringArray.decode(JSONStringArray.encode(list, dialect: .postgres)) == list, "\(list)")
        }
        let foreign = [#"["a", "b"]"#, #"[ "a" ]"#, #"["a","b" ]"#, #"["]"#, #"["a"]x"#, #"["\u0041"]"#, "[1,2]", "{}", "", "[\"a\",\"b\"]"]
        for json in foreign {
            let decoded = (try? JSONDecoder().decode([String].self, from: Data(json.utf8))) ?? []
            #expect(JSONStringArray.decode(json) == decoded, "\(json)")
        }
    }

    /// Both stores write `JSONEncoder`'s form (short escapes, slashes as they are), PostgreSQL
    /// with NUL as `\ufffd`; what SQLite wrote before (`\u00XX` for every control character)
    /// reads back the same.
    @Test func bothStoresWriteJSONEncodersFormAndTheOldFormReadsTheSame() throws {
        let list = ["a\nb\t\u{1}", "q\"b\\s/", "é"]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for strings in [list, ["x\u{0}y"], [], [""]] {
            let expected = String(decoding: try encoder.encode(strings), as: UTF8.self)
            #expect(JSONStringArray.encode(strings, dialect: .sqlite) == expected)
            #expect(JSONStringArray.encode(strings, dialect: .postgres) == expected.replacingOccurrences(of: "\\u0000", with: "\\ufffd"))
        }
        #expect(JSONStringArray.encode(list, dialect: .sqlite) == #"["a\nb\t\u0001","q\"b\\s/","é"]"#)
        #expect(JSONStringArray.decode(#"["a\u000ab\u0009\u0001","q\"b\\s/","é"]"#) == list)
    }
}
