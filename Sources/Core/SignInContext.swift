import Foundation

/// What a ``SignInFlow`` signs in through: the app's command line, terminal and config edit.
///
/// - Important: One context serves one run of `login`, on its task; it is not `Sendable`.
public protocol SignInContext: AnyObject {
    // MARK: The command line

    /// The value of a `--name value` option, if given.
    func option(_ name: String) -> String?
    /// Whether a flag was given.
    func flag(_ name: String) -> Bool
    /// An error that ends the command with exit 64 and its usage, saying `message`.
    func usageError(_ message: String) -> any Error
    /// `--token-file`, resolved against the working folder, if given.
    var givenSecretFile: URL? { get }
    /// What requests call the client: `feedsync/0.1.0`.
    var userAgent: String { get }

    // MARK: The person

    /// Prints a line on standard output.
    func say(_ line: String) throws
    /// Prints `text` without a line break and flushes, for a prompt on standard output.
    func ask(_ text: String) throws
    /// Flushes standard output, before a wait the person must see the reason of.
    func flush() throws
    /// Prints `feedsync: warning: …` on standard error.
    func warn(_ sentence: String)
    /// A line of standard input, or `nil` at its end or after `seconds`.
    func readLine(within seconds: TimeInterval) async -> String?
    /// A secret typed at the terminal without echo (or a line of standard input when it is not
    /// a terminal), trimmed; `nil` when none was given.
    func readSecret(prompt: String) -> String?
    /// Whether a graphical session is there to open a browser in.
    var hasDisplay: Bool { get }
    /// Opens `url` in the person's browser, quietly; the sign-in prints it anyway.
    func openInBrowser(_ url: URL)
    /// Listens on a loopback port for the one redirect that carries `state` (RFC 8252 §7.3).
    func listenForCallback(state: String) throws -> any SignInCallback

    // MARK: The config and the files

    /// Reads and checks the config, if it was not read yet: a flow calls it once what the
    /// person typed is checked and before it asks anything of the person, so that a config
    /// changed while the person signs in is not overwritten (``commit()`` refuses it).
    /// - Throws: ``ConfigError`` for a config that does not check out.
    func readConfig() throws
    /// The config file as the person named it.
    var configName: String { get }
    /// The folder the config's relative paths resolve against.
    var configFolder: URL { get }
    /// A server as a person types it (`example.social`, `https://example.social`); plain http
    /// only to this machine.
    func server(_ text: String) throws -> URL
    /// Refuses a file that is no place for a secret (a symlink, a folder, one others can read).
    func checkSecretFile(_ url: URL) throws
    /// The text of a regular file holding a secret, never read through a symlink; `nil` when
    /// there is none.
    func readSecretFile(_ url: URL) -> String?
    /// Decides where the login goes (``SignInTarget``), from the config, `--name`,
    /// `--token-file` and `--no-feed`, before anything is written.
    func target(_ request: SignInRequest) throws -> SignInTarget
    /// `url` as the config should name it: relative when it lies in the config's folder.
    func configPath(_ url: URL) -> String

    // MARK: The change, all or nothing

    /// Plans writing `secret` to `url` (mode 0600) at ``commit()``.
    /// - Returns: whether a file is there already, which the write replaces.
    @discardableResult
    func write(secret: String, to url: URL) throws -> Bool
    /// Plans adding `feed` to the config at ``commit()``.
    func addFeed(_ feed: NewFeed) throws
    /// Plans no change to the config, which must still be as it was read at ``commit()`` (a
    /// refreshed login's feeds read the secret the commit replaces).
    func keepConfig() throws
    /// Writes everything planned, or, when anything fails, nothing.
    func commit() throws
    /// After ``commit()``: prints `line` and that a new config was made, if it was, and asks the
    /// daemons that serve the store to reload.
    func announce(_ line: String) async throws
    /// After ``commit()`` of a refresh: asks the daemons that serve the store to reload.
    func reloadDaemons() async throws
    /// Keeps a session a sign-in made as `account`'s in the store, so the next pull reuses it;
    /// a store that cannot take it now is left alone (the pull logs in).
    func saveSession(_ session: Session, of account: AccountKey) async
}

/// The loopback end of a sign-in in the browser, listening until ``stop()``.
public protocol SignInCallback: AnyObject {
    /// Where the browser is sent back: `http://127.0.0.1:PORT/callback`.
    var redirectURI: String { get }
    /// The code of the callback with this sign-in's state.
    /// - Throws: ``ServiceError`` `.unauthorized` for the server's refusal, or when `seconds` pass.
    func code(within seconds: TimeInterval, host: String) async throws -> String
    /// Stops listening.
    func stop()
}
