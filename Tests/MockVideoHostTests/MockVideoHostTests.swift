import Core
import Foundation
import MockVideoHost
import Testing

@Suite struct MockVideoHostTests {
    /// The catalog shipped in Fixtures/, found from this file's place in the repository.
    static let catalog = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/videos/catalog.json")

    func makeHost(failureRate: Double = 0, seed: UInt64 = 1) async throws -> MockVideoHost {
        let host = MockVideoHost(settings: .init(catalog: Self.catalog, failureRate: failureRate, seed: seed), requests: RequestCounter())
        try await host.load()
        return host
    }

    @Test func listedIdsResolveFromTheCatalogAndUnlistedOnesAreAbsent() async throws {
        let host = try await makeHost()
        let videos = try await host.videos(withIDs: ["vid-0001", "vid-9999", "vid-0002"])
        #expect(videos.map(\.id) == ["vid-0001", "vid-0002"])
        #expect(videos.allSatisfy { $0.duration > 0 && $0.streamURL.scheme == "https" })
    }

    @Test func failuresFollowTheSeedExactly() async throws {
        func pattern(seed: UInt64) async throws -> [Bool] {
            let host = try await makeHost(failureRate: 0.5, seed: seed)
            var failed: [Bool] = []
            for _ in 0..<40 {
                do { _ = try await host.videos(withIDs: ["vid-0001"]); failed.append(false) } catch { failed.append(true) }
            }
            return failed
        }
        let first = try await pattern(seed: 7)
        #expect(try await pattern(seed: 7) == first)
        #expect(try await pattern(seed: 8) != first)
        #expect((10...30).contains(first.filter { $0 }.count), "about half of 40 fail at rate 0.5")
    }

    @Test func anUnreadableCatalogIsReported() async throws {
        let host = MockVideoHost(settings: .init(catalog: URL(fileURLWithPath: "/nonexistent.json")), requests: RequestCounter())
        await #expect(throws: ServiceError.self) { try await host.load() }
    }

    @Test func eachLookupCountsAsARequest() async throws {
        let counter = RequestCounter()
        let host = MockVideoHost(settings: .init(catalog: Self.catalog), requests: counter)
        try await host.load()
        _ = try await host.videos(withIDs: ["vid-0001"])
        _ = try await host.videos(withIDs: ["vid-0002", "vid-0003"])
        #expect(counter.value == 2)
    }
}
