import App
import Core

/// feedsync.json(5), written from the app's key tables (``Config/keyTables``) and each
/// integration's descriptor (its summary, its example and its keys), in the registry's order.
enum ConfigManual {
    static var page: String {
        var page = ManualPage(name: "feedsync.json", section: 5, description: "the feedsync config file")
        page.section("description")
        page.paragraph("""
            The config of feedsync(1) and feedsyncd(8) is one JSON object, read strictly: a syntax error names its line \
            and column, and duplicate keys, trailing commas, comments and unknown keys are errors (the nearest valid key \
            is suggested). A "$comment" key is allowed at the top. Relative paths in it resolve against the file's own folder. \
            An error names the file, the key path and the value, and the commands exit 78.
            """)
        page.paragraph("""
            Secrets never sit in the config. A key of a secret comes in two forms, one of which is given: NAMEEnv, the \
            environment variable that holds it, or NAMEFile, a file that holds only it (mode 0600; a file others can read \
            draws a warning). A URL with credentials in it is refused.
            """)
        page.paragraph("Durations are written 90s, 5m or 1h. The top level holds:")
        page.list([
            ("Cm store", "the store: an integration that stores (below) and its keys. Default: a sqlite store, feedsync.sqlite beside the config."),
            ("Cm feeds", "required: the feeds, in order; may be empty, and then pull has nothing to do and feedsyncd waits for a reload that adds one."),
            ("Cm daemon", "how feedsyncd schedules (below)."),
            ("Cm metrics", "where feedsyncd serves /metrics and /healthz (below)."),
        ], width: "Ds")
        for table in Config.keyTables {
            page.subsection(table.path)
            page.paragraph(table.doc)
            page.list(table.keys.map { row($0, of: table.keys) }, width: "Ds")
        }
        page.section("integrations")
        page.paragraph("""
            A store, posts or videos section names its integration with "integration", and holds that integration's \
            keys and no other.
            """)
        for descriptor in FeedsyncCLI.registry.descriptors {
            page.subsection("\(descriptor.name): \(descriptor.summary)")
            page.paragraph("Serves \(roles(descriptor)). For example:")
            page.literal(descriptor.example)
            page.list(descriptor.keys.map { row($0, of: descriptor.keys) }, width: "Ds")
        }
        page.section("examples")
        page.paragraph("A config of the registry's default store and a feed of each of its first two posts integrations:")
        page.literal(example)
        ManCommand.seeAlso(&page, except: "feedsync.json", section: 5)
        return page.text
    }

    /// A config made of the descriptors' own examples, so that it names only integrations the
    /// registry has: its default store, a feed of each of the first two posts integrations.
    static var example: String {
        let registry = FeedsyncCLI.registry
        let feeds = registry.descriptors.filter { $0.posts != nil }.prefix(2).map { descriptor in
            #"    {"name": "\#(descriptor.name)", "interval": "5m", "posts": \#(descriptor.example)}"#
        }
        return """
            {
              "store": \(registry.defaultStore.example),
              "feeds": [
            \(feeds.joined(separator: ",\n"))
              ],
              "daemon": {"concurrency": 4},
              "metrics": {"listen": "127.0.0.1:9464"}
            }
            """
    }

    /// One key of `keys` as a list item: its name, then its kind, whether it is required (alone or
    /// as one of a group) or its default, and what it does.
    static func row(_ key: ConfigKey, of keys: [ConfigKey]) -> (head: String, text: String) {
        let need: String = switch key.requirement {
        case .required: "required"
        case .oneOf(let group): "exactly one of " + listed(keys.filter { $0.requirement == .oneOf(group) }.map(\.name), lastJoin: " or ") + " is required"
        case .optional: key.defaultValue.map { "default \($0)" } ?? "optional"
        }
        return ("Cm \(ManualPage.escape(key.name))", "\(key.kind), \(need): \(key.doc).")
    }

    /// Which sections an integration can be named in.
    static func roles(_ descriptor: IntegrationDescriptor) -> String {
        var roles: [String] = []
        if descriptor.posts != nil { roles.append("a feed's posts (\"posts\")") }
        if descriptor.videos != nil { roles.append("a feed's videos (\"videos\")") }
        if descriptor.store != nil { roles.append("the store (\"store\")") }
        if descriptor.subscriptions != nil { roles.append("the feeds of an opml entry") }
        return roles.isEmpty ? "nothing by itself" : listed(roles, lastJoin: " and ")
    }
}
