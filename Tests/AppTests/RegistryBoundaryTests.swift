import App
import Core
import Foundation
import Testing

/// Nothing under `Sources/` but the registry file names an integration: no name of one as a
/// string literal, no import of its module, no cast to one of its types. So adding an
/// integration is its folder, `Package.swift` and one line of the registry.
@Suite struct RegistryBoundaryTests {
    /// The one file that lists the integrations.
    static let registryFile = "Sources/App/StandardIntegrations.swift"

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func noFileUnderSourcesButTheRegistryNamesAnIntegration() throws {
        let names = IntegrationRegistry.standard.descriptors.map { $0.name.lowercased() }
        let modules = try folders(in: "Integrations")
        let types = try publicTypes(in: "Integrations")
        // Every folder under Integrations/ is an integration the registry lists, and its types are seen.
        #expect(modules.count == names.count && types.contains("SQLiteCacheManager"), "what is looked for is found: \(modules)")
        var found: [String] = []
        for (path, lines) in try files(in: "Sources") where path != Self.registryFile {
            for (number, line) in lines.enumerated() {
                let lowered = line.lowercased()
                for name in names where lowered.contains("\"\(name)\"") {
                    found.append("\(path):\(number + 1): names the integration \"\(name)\"")
                }
                if let module = imported(line), modules.contains(module) {
                    found.append("\(path):\(number + 1): imports the integration \(module)")
                }
                for type in casts(line) where types.contains(type) {
                    found.append("\(path):\(number + 1): casts to the integration's type \(type)")
                }
            }
        }
        #expect(found.isEmpty, "only \(Self.registryFile) may name an integration:\n\(found.joined(separator: "\n"))")
    }

    @Test func theScanFindsWhatItLooksFor() {
        #expect(imported("import Mastodon") == "Mastodon" && imported("@testable import WebFeed") == "WebFeed" && imported("// import X") == nil)
        #expect(casts("guard let s = x as? SQLiteCacheManager, y is PostgresStoreManager else {}") == ["SQLiteCacheManager", "PostgresStoreManager"])
        #expect(casts("let y = z as! Foo.Bar") == ["Foo"])
    }

    /// The module a line imports, if it is an import.
    func imported(_ line: String) -> String? {
        let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
        guard let index = words.firstIndex(of: "import"), words[..<index].allSatisfy({ $0.hasPrefix("@") }), index + 1 < words.count else { return nil }
        return String(words[index + 1])
    }

    /// The types a line casts to or tests against (`as?`, `as!`, `is`).
    func casts(_ line: String) -> [String] {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "(" || $0 == "," })
        return words.indices.dropLast().compactMap { index in
            guard ["as?", "as!", "is"].contains(words[index]) else { return nil }
            let type = words[index + 1].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            return type.isEmpty ? nil : String(type)
        }
    }

    /// The folders directly under `folder` of the package.
    func folders(in folder: String) throws -> Set<String> {
        let base = Self.root.appendingPathComponent(folder)
        return Set(try FileManager.default.contentsOfDirectory(atPath: base.path).filter { name in
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: base.appendingPathComponent(name).path, isDirectory: &isFolder) && isFolder.boolValue
        })
    }

    /// Every file under `folder` of the package, by path from the package's root, as lines.
    func files(in folder: String) throws -> [(path: String, lines: [String])] {
        let base = Self.root.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(atPath: base.path) else { return [] }
        var files: [(String, [String])] = []
        for case let relative as String in walker {
            let url = base.appendingPathComponent(relative)
            guard let text = try? String(contentsOf: url, encoding: .utf8) else { continue }
            files.append(("\(folder)/\(relative)", text.components(separatedBy: "\n")))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    /// The public types the Swift files under `folder` declare.
    func publicTypes(in folder: String) throws -> Set<String> {
        var types: Set<String> = []
        for (path, lines) in try files(in: folder) where path.hasSuffix(".swift") {
            for line in lines {
                let words = line.split(separator: " ")
                guard words.first == "public", let index = words.firstIndex(where: { ["struct", "enum", "class", "actor", "protocol"].contains($0) }),
                      index + 1 < words.count else { continue }
                types.insert(String(words[index + 1].prefix { $0.isLetter || $0.isNumber || $0 == "_" }))
            }
        }
        return types
    }
}
