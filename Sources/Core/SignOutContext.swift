import Foundation

/// What a ``SignInFlow`` ends a login through, while `logout` takes its feed out of the config.
public protocol SignOutContext: AnyObject {
    /// An error that ends the command with exit 64 and its usage, saying `message`.
    func usageError(_ message: String) -> any Error
    /// Prints `feedsync: warning: …` on standard error.
    func warn(_ sentence: String)
    /// A path of the feed's section, resolved against the config's folder.
    func resolve(path: String) -> URL
    /// Refuses to end a login whose secret file other feeds still read with.
    func refuseShared(_ file: URL) throws
    /// The text of a regular file holding a secret, never read through a symlink.
    func readSecretFile(_ url: URL) -> String?
    /// Checks the config without the feed, before anything that cannot be undone (a revocation).
    func prepare() throws
    /// Gives up the change after a failed revocation: nothing is written.
    func discard()
    /// Plans deleting `file` once the config without the feed is saved.
    func remove(_ file: URL)
}
