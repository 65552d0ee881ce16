/// One form of `feedsync add WHAT` an integration recognises (a feed's URL, `@user@server`, a
/// handle), turning WHAT into the feeds to add: declared in the integration's descriptor
/// (``IntegrationDescriptor/addForms``), tried by the app in ``precedence`` order.
///
///     struct ExampleHandleForm: AddForm {
///         let summary = "an Example handle", label = "Example", noun = "an account"
///         let options: [AddOption] = []
///         let precedence = AddPrecedence.syntax
///         func recognises(_ text: String, _ context: any AddContext) throws -> Bool { text.hasPrefix("ex:") }
///         func add(_ text: String, _ context: any AddContext) async throws -> AddedFeeds { … }
///     }
public protocol AddForm: Sendable {
    /// What it recognises, for the command's help: `@user@server`, `a site or feed URL`.
    var summary: String { get }
    /// The integration (or the form) as an option's help names it: `Mastodon`, `an OPML file`.
    var label: String { get }
    /// What it adds, for an option that does not apply to it: `an account`, `a web feed`.
    var noun: String { get }
    /// For options this form refuses with another noun than ``noun``, that noun, by option
    /// name (a web feed's URL is `one address` to an OPML file's options).
    var nounsRefusing: [String: String] { get }
    /// The options only this form reads.
    var options: [AddOption] { get }
    /// When the form is tried: a form that recognises its own syntax before one that takes a
    /// file, and that before one that takes any address.
    var precedence: AddPrecedence { get }

    /// Whether `text` is this form's.
    /// - Throws: ``AddContext/usageError(_:)`` (or a ``ServiceError``) when `text` is this
    ///   form's syntax but not a valid one (`@a@` is no Mastodon account), so no other form is tried.
    func recognises(_ text: String, _ context: any AddContext) throws -> Bool

    /// The feeds `text` stands for, ready to add: found on the network when they must be (a
    /// site's feed), checked against the config (a login to read an account with).
    /// - Throws: ``ServiceError`` or ``AddContext/usageError(_:)``; nothing was changed.
    func add(_ text: String, _ context: any AddContext) async throws -> AddedFeeds
}

extension AddForm {
    public var nounsRefusing: [String: String] { [:] }
}

/// When an ``AddForm`` is tried, earliest first.
public enum AddPrecedence: Int, Sendable, Comparable {
    /// Text of the form's own syntax (`@user@server`, `did:…`).
    case syntax
    /// A file that exists (an OPML file).
    case file
    /// Anything else that could be an address.
    case address

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// An option an ``AddForm`` reads, and what it applies to when another form refuses it.
public struct AddOption: Sendable, Equatable {
    public var option: CommandOption
    /// What the option applies to, for a form that refuses it: `Mastodon accounts`,
    /// `an OPML file's sites`. Two forms with one option and phrases of one last word read
    /// together: `Mastodon and Bluesky accounts`.
    public var appliesTo: String

    public init(_ option: CommandOption, appliesTo: String) {
        self.option = option
        self.appliesTo = appliesTo
    }
}

/// What an ``AddForm`` adds: the feeds, and what to tell the person once they are saved.
public struct AddedFeeds: Sendable {
    /// The feeds, each without an interval: `--interval` is the app's to write.
    public var feeds: [NewFeed]
    /// The line printed once the config is saved: `added feed home (…) to feedsync.json`.
    public var saying: String
    /// Lines printed after it (`the page names 2 more feeds: …`).
    public var notes: [String]

    public init(feeds: [NewFeed], saying: String, notes: [String] = []) {
        self.feeds = feeds
        self.saying = saying
        self.notes = notes
    }
}

/// What an ``AddForm`` reads the command line and the config through.
///
/// - Important: One context serves one run of `add`, on its task; it is not `Sendable`.
public protocol AddContext: AnyObject {
    /// The value of a `--name value` option, if given (`--name` itself among them).
    func option(_ name: String) -> String?
    /// An error that ends the command with exit 64 and its usage, saying `message`.
    func usageError(_ message: String) -> any Error
    /// Prints `feedsync: warning: …` on standard error.
    func warn(_ sentence: String)
    /// The config file as the person named it.
    var configName: String { get }
    /// What requests call the client: `feedsync/0.1.0`.
    var userAgent: String { get }
    /// The config's feed entries as written (an OPML entry's feeds aside): each one's name
    /// (empty when it has none) and `posts` section.
    func feeds() throws -> [(name: String, posts: [String: ConfigValue])]
    /// Every feed name the config has, an OPML entry's feeds included.
    func takenNames() throws -> Set<String>
    /// Where the config's relative paths and `…Env` secrets are found: how a form reads a
    /// secret it is told of (a private feed's password file) as the config will.
    var configContext: ConfigContext { get }
}
