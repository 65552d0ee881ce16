import Core
import Foundation

/// Which feed a sign-in serves and where its secret goes, decided from the config before
/// anything is written: a new feed with a secret file of its own, or — a second login to an
/// account that already has one — that feed, whose secret file is refreshed in place and whose
/// entry (and every feed that reads with the same file) stays as it is.
///
///     let target = try LoginTarget.decide(request, in: editor, usage: usage)
///     try changes.write(secret: token, to: target.secretFile)
///     if target.addsFeed { try editor.addFeed(name: target.name, fields: …, usage: usage) }
public struct LoginTarget {
    /// The feed's name: the new feed's, or the login's whose secret is refreshed.
    public let name: String
    /// Where the secret goes.
    public let secretFile: URL
    /// For a refresh, every feed of the config that reads with ``secretFile``; empty for a new login.
    public let refreshed: [String]
    /// Whether a feed entry is to be added (a new login without `--no-feed`).
    public let addsFeed: Bool

    /// Whether the login replaces the secret of feeds the config has.
    public var isRefresh: Bool { !refreshed.isEmpty }

    /// What a sign-in knows when it decides.
    public struct Request {
        /// The integration of its feeds (its descriptor's name).
        public var integration: String
        /// The `posts` key naming its secret file (`accessTokenFile`).
        public var secretKey: String
        /// The account as a person reads it (`@alice@example.social`), for messages.
        public var account: String
        /// `--name`, if given.
        public var name: String?
        /// The name a new feed gets without `--name`.
        public var defaultName: String
        /// `--token-file`, if given.
        public var secretFile: URL?
        /// Where a new feed's secret goes without `--token-file`, by feed name.
        public var defaultSecretFile: (String) -> URL
        /// Whether a new login adds a feed (not `--no-feed`).
        public var addsFeed: Bool
        /// Whether a feed's `posts` section (with its secret file resolved) is this account's
        /// login: `true`, `false`, or `nil` when it cannot be told (a file from before logins
        /// recorded their account).
        public var isAccount: ([String: ConfigValue], URL) -> Bool?

        public init(integration: String, secretKey: String, account: String, name: String?, defaultName: String, secretFile: URL?,
                    defaultSecretFile: @escaping (String) -> URL, addsFeed: Bool, isAccount: @escaping ([String: ConfigValue], URL) -> Bool?) {
            self.integration = integration
            self.secretKey = secretKey
            self.account = account
            self.name = name
            self.defaultName = defaultName
            self.secretFile = secretFile
            self.defaultSecretFile = defaultSecretFile
            self.addsFeed = addsFeed
            self.isAccount = isAccount
        }
    }

    /// A feed entry of the config as written (OPML entries aside).
    struct Entry {
        var name: String
        var posts: [String: ConfigValue]
        /// The entry's secret file (`posts[secretKey]`), resolved against the config's folder.
        var secretFile: URL?
    }

    /// Decides where `request`'s secret goes.
    ///
    /// With `--name`: that feed when it is a login of this account on this server (refreshed), a
    /// new feed when the config has no such name, else refused. Without: the one login of the
    /// account the config has (refreshed); with none, a new feed named ``Request/defaultName``
    /// (or that feed, when it is a login that cannot be told apart). A new secret never goes to a
    /// file the config names.
    ///
    /// - Throws: ``UsageError`` for a name that is taken by another feed, two logins of the
    ///   account to choose from, a `--token-file` other than the refreshed feed's, or a secret
    ///   file the config names for something else.
    public static func decide(_ request: Request, in editor: ConfigEditor, usage: String) throws -> LoginTarget {
        let root = try ConfigJSON.parse(Data(editor.text.utf8))
        let context = ConfigContext(fileName: editor.displayName, directory: editor.url.deletingLastPathComponent(), environment: [:])
        let entries = Self.entries(root, secretKey: request.secretKey, context)
        let logins = entries.filter { entry in
            guard case .string(let integration)? = entry.posts["integration"] else { return false }
            return integration.lowercased() == request.integration && entry.secretFile != nil
        }
        func verdict(_ entry: Entry) -> Bool? { entry.secretFile.flatMap { request.isAccount(entry.posts, $0) } }
        let taken = try editor.feedNames()
        let shown = { (name: String) in "\"\(Terminal.safe(name, limit: 80))\"" }

        func refresh(_ entry: Entry) throws -> LoginTarget {
            let file = entry.secretFile!.standardizedFileURL
            if let given = request.secretFile, given.standardizedFileURL != file {
                throw UsageError("feed \(shown(entry.name)) is already the login of \(request.account) and keeps its secret in \(file.path); "
                                 + "leave out --token-file to sign in to it again, or choose another --name", usage: usage)
            }
            let sharing = entries.filter { $0.secretFile?.standardizedFileURL == file }.map(\.name)
            return LoginTarget(name: entry.name, secretFile: file, refreshed: sharing, addsFeed: false)
        }
        func clash(_ name: String) -> UsageError {
            UsageError("\(editor.displayName) already has a feed named \(shown(name)) that is not a login of \(request.account); "
                       + "choose another with --name", usage: usage)
        }
        func new(_ name: String) throws -> LoginTarget {
            let file = (request.secretFile ?? request.defaultSecretFile(name)).standardizedFileURL
            if let owner = namedFiles(root, context, editor: editor)[file.path] {
                throw UsageError("\(file.path) is \(owner) in \(editor.displayName); choose another \(request.secretFile == nil ? "--name" : "--token-file")", usage: usage)
            }
            // A file already there is replaced only when it holds what an earlier login left (one line).
            let existing = (try? SecretFile.check(file)) ?? nil
            if existing != nil, SecretFile.read(file, limit: 4096).map({ $0.contains("\n") }) ?? true {
                throw UsageError("\(file.path) is there and does not hold a login's secret; remove it or pass another --token-file", usage: usage)
            }
            return LoginTarget(name: name, secretFile: file, refreshed: [], addsFeed: request.addsFeed)
        }

        if let name = request.name {
            if let entry = entries.first(where: { $0.name == name }) {
                guard logins.contains(where: { $0.name == name }), verdict(entry) != false else {
                    if request.addsFeed { throw clash(name) }
                    return try new(name)
                }
                return try refresh(entry)
            }
            if taken.contains(name), request.addsFeed { throw clash(name) }
            return try new(name)
        }
        let mine = logins.filter { verdict($0) == true }
        let files = Set(mine.compactMap { $0.secretFile?.standardizedFileURL.path })
        if files.count > 1 {
            throw UsageError("\(request.account) has \(files.count) logins in \(editor.displayName) (feeds \(mine.map { shown($0.name) }.joined(separator: ", "))); "
                             + "name the one to sign in to again with --name", usage: usage)
        }
        if let entry = mine.first { return try refresh(entry) }
        let name = request.defaultName
        if let entry = logins.first(where: { $0.name == name }), verdict(entry) == nil { return try refresh(entry) }
        if taken.contains(name), request.addsFeed { throw clash(name) }
        return try new(name)
    }

    /// The feeds of `editor`'s config whose `posts` name `file` under a `…File` key: what still
    /// reads with a login's secret (`logout` deletes it only when none does).
    public static func feeds(naming file: URL, in editor: ConfigEditor) -> [String] {
        guard let root = try? ConfigJSON.parse(Data(editor.text.utf8)) else { return [] }
        let context = ConfigContext(fileName: editor.displayName, directory: editor.url.deletingLastPathComponent(), environment: [:])
        let wanted = file.standardizedFileURL.path
        return entries(root, secretKey: "", context).filter { entry in
            entry.posts.contains { key, value in
                guard key.hasSuffix("File"), case .string(let path) = value else { return false }
                return context.resolve(path: path).path == wanted
            }
        }.map(\.name)
    }

    /// The config's feed entries with a name, as written.
    static func entries(_ root: ConfigValue, secretKey: String, _ context: ConfigContext) -> [Entry] {
        guard case .object(let fields) = root, case .array(let feeds)? = fields["feeds"] else { return [] }
        return feeds.compactMap { feed in
            guard case .object(let entry) = feed, case .string(let name)? = entry["name"], entry["opml"] == nil,
                  case .object(let posts)? = entry["posts"] else { return nil }
            var file: URL?
            if case .string(let path)? = posts[secretKey] { file = context.resolve(path: path) }
            return Entry(name: name, posts: posts, secretFile: file)
        }
    }

    /// Every file the config names (secret files, OPML files, and the keys the integrations'
    /// tables say are paths: the store's, a catalog) and the config itself, by standardized
    /// path, each with what it is, for messages.
    static func namedFiles(_ root: ConfigValue, _ context: ConfigContext, editor: ConfigEditor) -> [String: String] {
        var named = [editor.url.standardizedFileURL.path: "the config itself"]
        let pathKeys = editor.registry.pathKeys.union(["opml"])
        func walk(_ value: ConfigValue, _ keyPath: String) {
            switch value {
            case .object(let fields):
                for (key, value) in fields {
                    let path = keyPath.isEmpty ? key : "\(keyPath).\(key)"
                    if case .string(let text) = value, key.hasSuffix("File") || pathKeys.contains(key) {
                        named[context.resolve(path: text).path] = "the file \(path) names"
                    } else {
                        walk(value, path)
                    }
                }
            case .array(let items):
                for (index, item) in items.enumerated() { walk(item, "\(keyPath)[\(index)]") }
            default: break
            }
        }
        walk(root, "")
        return named
    }
}
