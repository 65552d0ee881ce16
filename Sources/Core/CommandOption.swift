/// An option an integration adds to a command (`login`, `add`): the command takes it, and
/// its help and completions list it with the integration's label.
///
///     CommandOption("--service", value: "URL", "the PDS to sign in to (default https://bsky.social)")
public struct CommandOption: Sendable, Equatable {
    /// `--service`.
    public var name: String
    /// The value's placeholder (`URL`), or `nil` for a flag.
    public var value: String?
    /// What it does, in one line, without the label the command puts before it.
    public var help: String

    public init(_ name: String, value: String? = nil, _ help: String) {
        self.name = name
        self.value = value
        self.help = help
    }
}
