import Core
import Foundation
import Testing

/// What every store promises about streaming feeds' live states (`feedsync status`).
enum LiveStateContract {
    static func aLiveStateIsSetReplacedAndClearedAndSeenByAnotherConnection(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        let writer = store
        let reader = other
        #expect(try await reader.liveStates().isEmpty, "nothing recorded yet, and no table either")

        try await writer.setLiveState("live since 2026-11-25T10:00:00Z", ofFeed: "social")
        try await writer.setLiveState("polling: the connection was refused", ofFeed: "tags")
        try await writer.setLiveState("polling: it's \"quoted\"; DROP TABLE posts", ofFeed: "social")
        #expect(try await reader.liveStates() == ["social": "polling: it's \"quoted\"; DROP TABLE posts",
                                                   "tags": "polling: the connection was refused"])

        try await writer.setLiveState(nil, ofFeed: "social")
        #expect(try await reader.liveStates() == ["tags": "polling: the connection was refused"])
        #expect(try await store.feedStatuses().isEmpty, "a live state is not a feed of its own")
    }
}

@Suite struct SQLiteLiveStateContractTests {
    @Test func aLiveStateIsSetReplacedAndClearedAndSeenByAnotherConnection() async throws {
        try await LiveStateContract.aLiveStateIsSetReplacedAndClearedAndSeenByAnotherConnection(.sqlite)
    }
}

@Suite(.needsPostgres) struct PostgresLiveStateContractTests {
    @Test func aLiveStateIsSetReplacedAndClearedAndSeenByAnotherConnection() async throws {
        try await LiveStateContract.aLiveStateIsSetReplacedAndClearedAndSeenByAnotherConnection(.postgres)
    }
}
