import Core
import Foundation

/// A fake video host that answers from a fixture catalog, for demos and tests.
///
/// Ids the catalog does not list are not found: they are absent from the answer, and their
/// posts keep them as unresolved videos. Each lookup waits `latency` and then fails with
/// probability `failureRate`, deciding by a generator seeded with `seed`, so a run repeats
/// exactly. Each lookup counts as one request.
public actor MockVideoHost: VideoService {
    public struct Settings: Sendable {
        public var catalog: URL
        public var latency: Duration
        public var failureRate: Double
        public var seed: UInt64

        public init(catalog: URL, latency: Duration = .zero, failureRate: Double = 0, seed: UInt64 = 1) {
            self.catalog = catalog
            self.latency = latency
            self.failureRate = failureRate
            self.seed = seed
        }
    }

    public nonisolated let settings: Settings
    private let requests: RequestCounter
    private var random: SeededGenerator
    private var videos: [VideoID: Video]?

    public init(settings: Settings, requests: RequestCounter) {
        self.settings = settings
        self.requests = requests
        self.random = SeededGenerator(seed: settings.seed)
    }

    /// Reads the catalog. Entries that cannot be mapped are left out.
    ///
    /// - Throws: ``ServiceError`` `.unavailable` when the file cannot be read or is not a catalog.
    /// - Returns: how many catalog entries were left out.
    @discardableResult
    public func load() throws -> Int {
        let operation = "loading the video catalog \(settings.catalog.path)"
        guard let data = FileManager.default.contents(atPath: settings.catalog.path) else {
            throw ServiceError(.unavailable, operation, "the file cannot be read")
        }
        let catalog: Catalog
        do {
            catalog = try JSONDecoder().decode(Catalog.self, from: data)
        } catch {
            throw ServiceError(.unavailable, operation, "it is not a catalog ({\"videos\": [...]})")
        }
        var videos: [VideoID: Video] = [:]
        for entry in catalog.videos {
            if let video = try? Video(entry) { videos[video.id] = video }
        }
        self.videos = videos
        return catalog.videos.count - videos.count
    }

    public func videos(withIDs ids: [VideoID]) async throws -> [Video] {
        let operation = "looking up \(ids.count) videos on the mock video host"
        // Decide before waiting, so concurrent lookups draw from the generator in call order.
        let fails = Double(random.next() >> 11) / Double(1 << 53) < settings.failureRate
        requests.add()
        if settings.latency > .zero { try await Task.sleep(for: settings.latency) }
        if fails { throw ServiceError(.unavailable, operation, "injected failure (failureRate \(settings.failureRate))") }
        guard let videos else { throw ServiceError(.unavailable, operation, "the catalog is not loaded") }
        return ids.compactMap { videos[$0] }
    }
}
