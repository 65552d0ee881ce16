import Core
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Changes the config file the way `feedsync add`, `remove`, `login` and `logout` do: the text
/// is edited in place (the rest of the file, its order, spacing and `$comment`s, stays as the
/// operator wrote it), the new file is checked exactly as `config check` checks it, and only
/// then replaces the old one, atomically, keeping its mode.
///
///     var editor = try ConfigEditor(configPath: options["--config"])
///     try editor.addFeed(name: "blog", fields: [("interval", .string("1h")), ("posts", .object([...]))])
///     try editor.save()
public struct ConfigEditor {
    /// An ordered JSON value for the feed objects the editor writes.
    public indirect enum Value {
        case string(String)
        case number(Int)
        /// A number that is not whole (finite: config values are).
        case decimal(Double)
        case bool(Bool)
        case null
        case array([Value])
        case object([(String, Value)])

        /// A value an integration made for a section (``Core/NewFeed``); an object's keys in
        /// sorted order, for it has none of its own.
        public init(_ value: ConfigValue) {
            switch value {
            case .string(let text): self = .string(text)
            case .bool(let flag): self = .bool(flag)
            case .null: self = .null
            case .number(let number): self = number.rounded() == number && abs(number) < 1e15 ? .number(Int(number)) : .decimal(number)
            case .array(let items): self = .array(items.map(Value.init))
            case .object(let fields): self = .object(fields.sorted { $0.key < $1.key }.map { ($0.key, Value($0.value)) })
            }
        }
    }

    public let url: URL
    /// The path as the operator would name it.
    public let displayName: String
    /// Whether the file existed before (otherwise ``save()`` creates it, mode 0600).
    public let existed: Bool
    public private(set) var text: String
    /// The file's bytes when it was read, to tell whether someone else changed it before ``save()``.
    private(set) var original: Data?
    /// Whether a feed name that begins with `-` is read rather than refused (``Config/load(from:displayName:environment:optionLikeNames:registry:)``).
    public let optionLikeNames: Bool
    /// The integrations the config's names choose from, for checking an edit as `config check` would.
    public let registry: IntegrationRegistry

    /// Finds the config as every command does (`--config`, `./feedsync.json`, `$FEEDSYNC_CONFIG`);
    /// with none anywhere, a new `./feedsync.json` with the registry's default store beside it.
    ///
    /// - Parameter optionLikeNames: read a feed name that begins with `-` (`remove`, `logout`).
    public init(configPath: String?, environment: [String: String] = ProcessInfo.processInfo.environment,
                optionLikeNames: Bool = false, registry: IntegrationRegistry = .standard) throws {
        self.optionLikeNames = optionLikeNames
        self.registry = registry
        let located: (URL, String)
        if let found = try? Runtime.locateConfig(configPath, environment: environment) {
            located = found
        } else {
            located = (URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("feedsync.json"), "feedsync.json")
        }
        (url, displayName) = located
        if FileManager.default.fileExists(atPath: url.path) {
            guard let data = FileManager.default.contents(atPath: url.path), let text = String(data: data, encoding: .utf8) else {
                throw ConfigError(file: displayName, keyPath: "", message: "cannot be read")
            }
            // The file must check out before it is changed: an edit never hides an older fault.
            _ = try Config.load(from: url, displayName: displayName, environment: environment, optionLikeNames: optionLikeNames,
                                registry: registry)
            self.text = text
            original = data
            existed = true
        } else {
            let store = registry.defaultStore
            let fields = [("integration", store.name)] + (store.store?.newConfigFields ?? []).map { ($0.key, $0.value) }
            text = """
                {
                  "store": {\(fields.map { "\(Self.quote($0.0)): \(Self.quote($0.1))" }.joined(separator: ", "))},
                  "feeds": [
                  ]
                }

                """
            existed = false
        }
    }

    /// The feeds' entries as written (`name`, or `nil` for an OPML entry, which expands to several).
    public func entries() throws -> [(name: String?, opml: String?, range: Range<Int>)] {
        let bytes = Array(text.utf8)
        let scanner = JSONSpans(bytes)
        guard let feeds = try scanner.member("feeds", ofObjectAt: scanner.skipSpace(0)) else { return [] }
        return try scanner.elements(ofArrayAt: feeds.value.lowerBound).map { range in
            let object = String(decoding: bytes[range], as: UTF8.self)
            guard case .object(let fields) = try ConfigJSON.parse(Data(object.utf8)) else { return (nil, nil, range) }
            var name: String?, opml: String?
            if case .string(let value) = fields["name"] { name = value }
            if case .string(let value) = fields["opml"] { opml = value }
            return (name, opml, range)
        }
    }

    /// Appends a feed to `feeds`.
    ///
    /// - Throws: ``UsageError`` when a feed of the config (an OPML file's included) has the name.
    public mutating func addFeed(name: String, fields: [(String, Value)], usage: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        try addFeeds([(name, fields)], usage: usage, environment: environment)
    }

    /// Appends feeds to `feeds` in one edit: the config's names are read once, however many
    /// there are (an OPML file of a thousand subscriptions is one edit, then one check).
    ///
    /// - Throws: ``UsageError`` when a feed of the config (an OPML file's included), or another
    ///   of `feeds`, has one of the names.
    public mutating func addFeeds(_ feeds: [(name: String, fields: [(String, Value)])], usage: String,
                                  environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard !feeds.isEmpty else { return }
        var taken = try feedNames(environment: environment)
        for feed in feeds where !taken.insert(feed.name).inserted {
            throw UsageError("\(displayName) already has a feed named \"\(Terminal.safe(feed.name, limit: 80))\"; choose another with --name", usage: usage)
        }
        let bytes = Array(text.utf8)
        let scanner = JSONSpans(bytes)
        let root = scanner.skipSpace(0)
        guard let feedsMember = try scanner.member("feeds", ofObjectAt: root) else {
            throw ConfigError(file: displayName, keyPath: "feeds", message: "is missing")
        }
        let elements = try scanner.elements(ofArrayAt: feedsMember.value.lowerBound)
        let indent = elements.first.map { Self.column(of: $0.lowerBound, in: bytes) } ?? (Self.column(of: feedsMember.key.lowerBound, in: bytes) + 2)
        let pad = String(repeating: " ", count: indent)
        let rendered = feeds.map { Self.render(.object([("name", .string($0.name))] + $0.fields), indent: indent) }
            .joined(separator: ",\n\(pad)")
        var edited = bytes
        if let last = elements.last {
            edited.insert(contentsOf: Array(",\n\(pad)\(rendered)".utf8), at: last.upperBound)
        } else {
            // `[` then whatever space: the entries go on lines of their own before `]`.
            let open = feedsMember.value.lowerBound
            let close = feedsMember.value.upperBound - 1
            let closing = "\n" + String(repeating: " ", count: max(0, indent - 2))
            edited.replaceSubrange((open + 1)..<close, with: Array("\n\(pad)\(rendered)\(closing)".utf8))
        }
        text = String(decoding: edited, as: UTF8.self)
    }

    /// Takes the feed named `name` out of `feeds` and returns its entry's fields.
    ///
    /// - Throws: ``UsageError`` when no entry has the name (or it comes from an OPML file).
    @discardableResult
    public mutating func removeFeed(named name: String, usage: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ConfigValue {
        let all = try entries()
        guard let index = all.firstIndex(where: { $0.name == name }) else {
            // Only a name that an OPML entry does expand to is sent to that OPML file.
            if all.contains(where: { $0.opml != nil }), existed {
                var options = Runtime.Options(feeds: .none, createStore: false)
                options.registry = registry
                options.deferMissingSecrets = true
                options.optionLikeNames = optionLikeNames
                let runtime = try Runtime.load(configPath: url.path, environment: environment, options)
                if runtime.feedNames.contains(name) {
                    let origin = runtime.feedOrigins[name].map { " (\(Terminal.safe($0, limit: 300)))" } ?? ""
                    throw UsageError("\(displayName) has no entry for \"\(Terminal.safe(name, limit: 80))\": it is a feed of an OPML file\(origin); "
                                     + "remove it from that OPML file", usage: usage)
                }
            }
            throw UsageError("\(displayName) has no feed named \"\(Terminal.safe(name, limit: 80))\"", usage: usage)
        }
        var bytes = Array(text.utf8)
        let entry = try ConfigJSON.parse(Data(bytes[all[index].range]))
        // With the comma and space that joined it to its neighbour; the last one leaves `[]`.
        let cut: Range<Int>
        if all.count == 1 {
            let scanner = JSONSpans(bytes)
            let feeds = try scanner.member("feeds", ofObjectAt: scanner.skipSpace(0))?.value ?? all[index].range
            cut = (feeds.lowerBound + 1)..<(feeds.upperBound - 1)
        } else if index > 0 {
            cut = all[index - 1].range.upperBound..<all[index].range.upperBound
        } else {
            cut = all[index].range.lowerBound..<all[index + 1].range.lowerBound
        }
        bytes.removeSubrange(cut)
        text = String(decoding: bytes, as: UTF8.self)
        return entry
    }

    /// Writes the new text beside the old file, checks it as `config check` would, and moves it
    /// into place; the old file's mode is kept (a new file gets 0600).
    ///
    /// - Throws: ``ConfigError`` (the new file does not check out: nothing was changed), or a
    ///   ``ServiceError`` `.storage` when the folder cannot be written, `.locked` when the file
    ///   changed since it was read.
    public func save(environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let staged = try stage(environment: environment)
        defer { staged.discard() }
        try staged.commit()
    }

    /// Every feed name the config has on disk now, OPML-expanded ones included (none for a new file).
    public func feedNames(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Set<String> {
        guard existed else { return [] }
        var options = Runtime.Options(feeds: .none, createStore: false)
        options.registry = registry
        options.deferMissingSecrets = true
        options.optionLikeNames = optionLikeNames
        return Set(try Runtime.load(configPath: url.path, environment: environment, options).feedNames)
    }

    static func column(of offset: Int, in bytes: [UInt8]) -> Int {
        var start = offset
        while start > 0, bytes[start - 1] != 0x0A { start -= 1 }
        return offset - start
    }

    /// A feed object, one key a line for the top level and nested objects on one line.
    static func render(_ value: Value, indent: Int, nested: Bool = false) -> String {
        switch value {
        case .string(let text): return quote(text)
        case .number(let number): return String(number)
        case .decimal(let number): return "\(number)"
        case .bool(let flag): return flag ? "true" : "false"
        case .null: return "null"
        case .array(let items): return "[" + items.map { render($0, indent: 0, nested: true) }.joined(separator: ", ") + "]"
        case .object(let fields):
            if nested || fields.count <= 1 {
                return "{" + fields.map { "\(quote($0.0)): \(render($0.1, indent: 0, nested: true))" }.joined(separator: ", ") + "}"
            }
            let pad = String(repeating: " ", count: indent + 2)
            return "{\n" + fields.map { "\(pad)\(quote($0.0)): \(render($0.1, indent: indent + 2, nested: true))" }.joined(separator: ",\n")
                + "\n" + String(repeating: " ", count: indent) + "}"
        }
    }

    /// A JSON string literal, as feedsync's one JSON writer writes it, with terminal controls
    /// escaped too (DEL, C1, bidirectional overrides), so a config shown with `cat` moves no cursor.
    public static func quote(_ text: String) -> String {
        var json = JSONWriter(escaping: .terminalControls)
        json.string(text)
        return json.text
    }
}

/// Where values start and end in JSON text already known to be valid, so an edit can touch
/// one value and leave every other byte as it was.
struct JSONSpans {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    struct Malformed: Error {}

    func skipSpace(_ start: Int) -> Int {
        var i = start
        while i < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[i]) { i += 1 }
        return i
    }

    /// The end (exclusive) of the value starting at `start`.
    func end(ofValueAt start: Int) throws -> Int {
        guard start < bytes.count else { throw Malformed() }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            var i = start + 1
            while i < bytes.count {
                if bytes[i] == UInt8(ascii: "\\") { i += 2; continue }
                if bytes[i] == UInt8(ascii: "\"") { return i + 1 }
                i += 1
            }
            throw Malformed()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var i = start
            while i < bytes.count {
                switch bytes[i] {
                case UInt8(ascii: "\""): i = try end(ofValueAt: i); continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return i + 1 }
                default: break
                }
                i += 1
            }
            throw Malformed()
        default:
            var i = start
            while i < bytes.count, !([0x20, 0x0A, 0x0D, 0x09, UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]")].contains(bytes[i])) { i += 1 }
            return i
        }
    }

    /// The member `key` of the object at `start`: where its key and its value are.
    func member(_ key: String, ofObjectAt start: Int) throws -> (key: Range<Int>, value: Range<Int>)? {
        guard start < bytes.count, bytes[start] == UInt8(ascii: "{") else { throw Malformed() }
        var i = skipSpace(start + 1)
        while i < bytes.count, bytes[i] != UInt8(ascii: "}") {
            let keyEnd = try end(ofValueAt: i)
            let name = try ConfigJSON.parse(Data(bytes[i..<keyEnd]))
            let valueStart = skipSpace(skipSpace(keyEnd) + 1)
            let valueEnd = try end(ofValueAt: valueStart)
            if case .string(let text) = name, text == key { return (i..<keyEnd, valueStart..<valueEnd) }
            i = skipSpace(valueEnd)
            if i < bytes.count, bytes[i] == UInt8(ascii: ",") { i = skipSpace(i + 1) }
        }
        return nil
    }

    /// The elements of the array at `start`.
    func elements(ofArrayAt start: Int) throws -> [Range<Int>] {
        guard start < bytes.count, bytes[start] == UInt8(ascii: "[") else { throw Malformed() }
        var found: [Range<Int>] = []
        var i = skipSpace(start + 1)
        while i < bytes.count, bytes[i] != UInt8(ascii: "]") {
            let end = try end(ofValueAt: i)
            found.append(i..<end)
            i = skipSpace(end)
            if i < bytes.count, bytes[i] == UInt8(ascii: ",") { i = skipSpace(i + 1) }
        }
        return found
    }
}

extension NewFeed {
    /// The feed's fields as ``ConfigEditor`` writes them: `interval`, if any, then `posts`.
    public var editorFields: [(String, ConfigEditor.Value)] {
        (interval.map { [("interval", ConfigEditor.Value.string($0))] } ?? []) + [("posts", .object(posts.map { ($0.key, ConfigEditor.Value($0.value)) }))]
    }
}
