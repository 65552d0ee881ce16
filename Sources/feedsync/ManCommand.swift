import App
import Core
import Foundation

/// `feedsync man feedsync|feedsyncd|config`: prints a manual page in mdoc(7), written from the
/// declarations the commands parse and the config's key tables, so it cannot drift from them.
/// `make install` and `make deb` install its output as feedsync(1), feedsyncd(8) and feedsync.json(5).
enum ManCommand: Command {
    static let words = ["man"]
    static let summary = "Print a manual page in mdoc: feedsync(1), feedsyncd(8) or feedsync.json(5)."
    static let synopsis = "man feedsync|feedsyncd|config"
    static let options: [CommandLineOptions.Spec] = []

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.count == 1, let page = options.positionals.first else {
            throw UsageError("name the page: feedsync, feedsyncd or config", usage: usage)
        }
        switch page {
        case "feedsync": try output.write(commandsPage)
        case "feedsyncd": try output.write(DaemonManual.page)
        case "config": try output.write(ConfigManual.page)
        default: throw UsageError("there is no page \"\(Terminal.safe(page, limit: 40))\"; name feedsync, feedsyncd or config", usage: usage)
        }
        return .ok
    }

    /// feedsync(1): every command with its synopsis, what it does and each of its options.
    static var commandsPage: String {
        var page = ManualPage(name: "feedsync", section: 1, description: "keep a local mirror of social feeds")
        page.section("synopsis")
        page.macro(".Nm")
        page.macro(".Ar command")
        page.macro(".Op Ar options")
        for command in FeedsyncCLI.commands {
            page.macro(".Nm")
            ManualPage.synopsis(command.synopsis).forEach { page.macro($0) }
        }
        page.section("description")
        page.paragraph("""
            feedsync keeps a local mirror of social feeds (web feeds, Mastodon, Bluesky, an HTTP API) in a SQLite file \
            or a PostgreSQL database. Each command below does one thing and exits; feedsyncd(8) keeps the feeds in sync.
            """)
        page.paragraph("""
            Options may come before the command. --version and -V work anywhere before --, and -h is --help. \
            An argument after -- is the command's as written, even one that begins with -. \
            Without --config, the config is ./feedsync.json if that exists, else the file $FEEDSYNC_CONFIG names.
            """)
        page.paragraph("""
            status, posts, search, export, read and unread only read the local store: they need no secret and no network. \
            Everything printed that came from a server has its control characters escaped.
            """)
        for command in FeedsyncCLI.commands {
            page.subsection("feedsync " + command.words.joined(separator: " "))
            page.paragraph(command.summary)
            page.list((command.options + [.helpFlag]).map { (ManualPage.head($0), $0.help) }, width: "Ds")
        }
        page.section("environment")
        page.list([
            ("Ev FEEDSYNC_CONFIG", "the config file, when there is no --config and no ./feedsync.json"),
            ("Ev ...Env", "a secret is read from the environment variable a config key ending in Env names; see feedsync.json(5)"),
        ], width: "Ds")
        page.section("files")
        page.list([
            ("Pa ./feedsync.json", "the config, when --config and $FEEDSYNC_CONFIG name none; login and add create it (mode 0600)"),
            ("Pa ./feedsync.sqlite", "the SQLite store a config written by login or add names, beside the config"),
        ], width: "Ds")
        exitStatus(&page)
        page.section("examples")
        page.literal("""
            feedsync login mastodon example.social
            feedsync add https://example.org/
            feedsync pull
            feedsync posts --limit 5
            feedsync search '"release notes" OR changelog'
            feedsync export --format csv --output posts.csv
            """)
        seeAlso(&page, except: "feedsync", section: 1)
        return page.text
    }

    /// The EXIT STATUS section, from ``ExitStatus``.
    static func exitStatus(_ page: inout ManualPage) {
        page.section("exit status")
        page.list(ExitStatus.allCases.map { ("\($0.rawValue)", $0.meaning) }, width: "Ds")
    }

    /// SEE ALSO: the other two pages, in mdoc's order (by section, then name).
    static func seeAlso(_ page: inout ManualPage, except name: String, section: Int) {
        page.section("see also")
        let pages = [("feedsync", 1), ("feedsync.json", 5), ("feedsyncd", 8)].filter { $0.0 != name }
        for (index, other) in pages.enumerated() {
            page.macro(".Xr \(other.0) \(other.1)" + (index < pages.count - 1 ? " ," : ""))
        }
        page.paragraph("""
            The full manual is in /usr/share/doc/feedsync (the docs folder of the source). \
            The mirror is a SQLite database any SQLite tool reads, such as sqlite3(1).
            """)
    }
}
