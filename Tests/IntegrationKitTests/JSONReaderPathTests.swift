import Foundation
import IntegrationKit
import Testing

/// `JSONReader.string(at:in:)`, the one-field read of a small answer (an error's message, an
/// announced URL), case by case.
@Suite struct JSONReaderPathTests {
    @Test(arguments: [
        (#"{"error":"bad token"}"#, ["error"], "bad token"),
        (#" {"a":1,"error":"x\u00e9"} "#, ["error"], "xé"),
        (#"{"urls":{"streaming_api":"wss://s.example"}}"#, ["urls", "streaming_api"], "wss://s.example"),
        (#"{"configuration":{"urls":{"streaming":"wss://a"},"x":[1,{"y":null}]}}"#, ["configuration", "urls", "streaming"], "wss://a"),
        (#"{"error":"first","error":"last"}"#, ["error"], "last"),
        (#""top""#, [], "top"),
    ] as [(String, [String], String)])
    func findsTheString(body: String, path: [String], expected: String) {
        #expect(JSONReader.string(at: path, in: Data(body.utf8)) == expected)
    }

    @Test(arguments: [
        ("", ["error"]),
        ("not json", ["error"]),
        (#"{"error":"x"} trailing"#, ["error"]),
        (#"{"error":"x""#, ["error"]),
        (#"{"error":42}"#, ["error"]),
        (#"{"error":null}"#, ["error"]),
        (#"{"error":{"message":"x"}}"#, ["error"]),
        (#"["error"]"#, ["error"]),
        (#"{"urls":"wss://a"}"#, ["urls", "streaming_api"]),
        (#"{"other":"x"}"#, ["error"]),
    ] as [(String, [String])])
    func findsNothing(body: String, path: [String]) {
        #expect(JSONReader.string(at: path, in: Data(body.utf8)) == nil)
    }

    @Test func aBodyNestedBeyondTheBoundIsNotRead() {
        let deep = String(repeating: "[", count: JSONReader.maxDepth + 10) + String(repeating: "]", count: JSONReader.maxDepth + 10)
        #expect(JSONReader.string(at: ["error"], in: Data(#"{"x":\#(deep),"error":"m"}"#.utf8)) == nil)
    }
}
