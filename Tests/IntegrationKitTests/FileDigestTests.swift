import Foundation
import IntegrationKit
import Testing

/// A file's SHA-256 (OpenSSL's) against FIPS 180-4's vectors and against ``SHA256`` over a file
/// longer than one read block, and what it refuses to read.
@Suite struct FileDigestTests {
    func file(_ data: Data) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("digest-\(UUID().uuidString)")
        try data.write(to: url)
        return url
    }

    @Test func matchesTheStandardVectorsAndTheSwiftDigestAcrossReadBlocks() throws {
        let empty = try file(Data()), abc = try file(Data("abc".utf8))
        var generator = SystemRandomNumberGenerator()
        let bytes = Data((0..<(600_000)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let large = try file(bytes)
        defer { for url in [empty, abc, large] { try? FileManager.default.removeItem(at: url) } }
        #expect(FileDigest.sha256Hex(ofFileAt: empty.path) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(FileDigest.sha256Hex(ofFileAt: abc.path) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(FileDigest.sha256Hex(ofFileAt: large.path) == SHA256.hex(bytes))
    }

    @Test func aMissingFileOrALinkIsNotRead() throws {
        let target = try file(Data("abc".utf8))
        let link = FileManager.default.temporaryDirectory.appendingPathComponent("digest-link-\(UUID().uuidString)")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        defer { for url in [target, link] { try? FileManager.default.removeItem(at: url) } }
        #expect(FileDigest.sha256Hex(ofFileAt: link.path) == nil)
        #expect(FileDigest.sha256Hex(ofFileAt: target.path + ".missing") == nil)
    }
}
