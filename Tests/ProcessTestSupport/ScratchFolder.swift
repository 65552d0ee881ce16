import Foundation

/// Runs `body` with a new empty folder in the system's temporary folder, named `prefix-UUID`, and
/// removes the folder and all in it when `body` returns or throws.
public func withScratchFolder<T>(_ prefix: String, _ body: (URL) async throws -> T) async throws -> T {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    return try await body(folder)
}
