import App
import Core
import Foundation
import Testing

/// Each integration's key table says what its builder does: the keys it reads, no more and no
/// fewer, with the bounds it holds them to. So `config check`, and a manual made from the
/// tables, cannot drift from the code that reads the config.
@Suite struct DescriptorKeyTableTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every integration that builds something from a section.
    static var built: [IntegrationDescriptor] {
        IntegrationRegistry.standard.descriptors.filter { $0.posts != nil || $0.videos != nil || $0.store != nil }
    }

    @Test(arguments: built.map(\.name))
    func theBuilderReadsExactlyTheKeysOfTheTable(_ name: String) throws {
        let descriptor = try #require(IntegrationRegistry.standard.descriptor(named: name))
        let section = try section(descriptor.example)
        try build(descriptor, section)
        let table = descriptor.keys.map(\.name)
        #expect(Set(table).count == table.count, "no key is listed twice")
        #expect(section.keysRead.subtracting(["integration"]) == Set(table),
                "read but not listed: \(section.keysRead.subtracting(table + ["integration"]).sorted()); listed but not read: \(Set(table).subtracting(section.keysRead).sorted())")
        #expect(descriptor.keys.filter(\.isSecret).allSatisfy { $0.name.hasSuffix("Env") || $0.name.hasSuffix("File") })
    }

    @Test(arguments: built.map(\.name))
    func eachBoundOfTheTableIsTheBuildersBound(_ name: String) throws {
        let descriptor = try #require(IntegrationRegistry.standard.descriptor(named: name))
        for key in descriptor.keys {
            let (inside, outside) = values(key.kind)
            for value in inside {
                #expect(throws: Never.self, "\(name).\(key.name) = \(value)") { try build(descriptor, section(descriptor.example, key.name, value)) }
            }
            for value in outside {
                do {
                    try build(descriptor, section(descriptor.example, key.name, value))
                    Issue.record("\(name).\(key.name) = \(value) is outside \(key.kind) but was taken")
                } catch let error as ConfigError {
                    #expect(error.keyPath == "section.\(key.name)", "\(error)")
                }
            }
        }
    }

    @Test func theTablesOfTheStandardIntegrationsAreComplete() {
        for descriptor in IntegrationRegistry.standard.descriptors {
            #expect(!descriptor.summary.isEmpty && !descriptor.keys.isEmpty, "\(descriptor.name)")
            #expect(descriptor.keys.allSatisfy { !$0.doc.isEmpty && !$0.doc.contains("\n") }, "\(descriptor.name): one line of doc a key")
        }
        #expect(IntegrationRegistry.standard.defaultStore.store?.traits.keepsLocalFiles == true)
    }

    /// The values just inside a kind's bounds and just outside them.
    func values(_ kind: ConfigKey.Kind) -> (inside: [ConfigValue], outside: [ConfigValue]) {
        switch kind {
        case .int(let range):
            let above = range.upperBound < Int(1e15) ? [ConfigValue.number(Double(range.upperBound) + 1)] : []
            return ([.number(Double(range.lowerBound)), .number(Double(min(range.upperBound, Int(1e15) - 1)))],
                    [.number(Double(range.lowerBound) - 1)] + above)
        case .double(let range):
            return ([.number(range.lowerBound), .number(range.upperBound)], [.number(range.lowerBound - 0.5), .number(range.upperBound + 0.5)])
        case .duration(let range):
            return ([.string("\(range.lowerBound)s"), .string("\(range.upperBound)s")],
                    [.string("\(range.lowerBound / 2)s"), .string("\(range.upperBound + 1)s")])
        default:
            return ([], [])
        }
    }

    /// The descriptor's example section, with `key` set to `value` if given, read where the
    /// package's fixtures are and with its secrets deferred.
    func section(_ example: String, _ key: String? = nil, _ value: ConfigValue? = nil) throws -> ConfigSection {
        guard case .object(var fields) = try ConfigJSON.parse(Data(example.utf8)) else { throw ConfigError(file: "example", keyPath: "", message: "not an object") }
        if let key { fields[key] = value }
        let context = ConfigContext(fileName: "example", directory: Self.root, environment: [:])
        context.deferMissingSecrets = true
        return ConfigSection(fields, path: "section", context: context)
    }

    /// Builds what the descriptor builds of `section`, touching nothing.
    func build(_ descriptor: IntegrationDescriptor, _ section: ConfigSection) throws {
        _ = try section.string("integration")
        if let posts = descriptor.posts { _ = try posts.makeBackend(section, IntegrationContext()) }
        if let videos = descriptor.videos { _ = try videos.makeService(section, IntegrationContext()) }
        if let store = descriptor.store { _ = try store.makeStore(section, false, .disabled) }
    }
}
