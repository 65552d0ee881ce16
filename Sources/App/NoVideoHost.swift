import Core

/// The video service of a feed that configures none: it resolves nothing, so posts keep their
/// video ids as unresolved until a video host is configured.
struct NoVideoHost: VideoService {
    func videos(withIDs ids: [VideoID]) async throws -> [Video] { [] }
}
