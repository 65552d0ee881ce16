import App

/// `feedsync completion bash|zsh|fish`: a shell completion script for the commands and their
/// options, generated from the same declarations the parser uses, so it cannot drift.
enum CompletionCommand: Command {
    static let words = ["completion"]
    static let summary = "Print a shell completion script (bash, zsh or fish)."
    static let synopsis = "completion bash|zsh|fish"
    static let options: [CommandLineOptions.Spec] = []

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.count == 1, let shell = options.positionals.first, ["bash", "zsh", "fish"].contains(shell) else {
            throw UsageError("name the shell: bash, zsh or fish", usage: usage)
        }
        switch shell {
        case "bash": try output.line(bash)
        case "zsh": try output.line(zsh)
        default: try output.line(fish)
        }
        return .ok
    }

    /// Each command's words and its options (`--help` included).
    static var table: [(command: String, options: [String])] {
        FeedsyncCLI.commands.map { ($0.words.joined(separator: " "), ($0.options + [.helpFlag]).map(\.name)) }
    }

    static var bash: String {
        let cases = table.map { "        \"\($0.command)\") opts=\"\($0.options.joined(separator: " "))\" ;;" }.joined(separator: "\n")
        let firstWords = Set(table.map { String($0.command.split(separator: " ")[0]) }).sorted().joined(separator: " ")
        return """
            # feedsync completion for bash: eval "$(feedsync completion bash)"
            _feedsync() {
                local cur="${COMP_WORDS[COMP_CWORD]}" command="${COMP_WORDS[1]}" opts=""
                if [ "$COMP_CWORD" -eq 1 ]; then
                    COMPREPLY=($(compgen -W "\(firstWords) help --help --version" -- "$cur")); return
                fi
                if [ "$command" = "config" ]; then
                    if [ "$COMP_CWORD" -eq 2 ]; then COMPREPLY=($(compgen -W "check" -- "$cur")); return; fi
                    command="config check"
                fi
                if [ "$command" = "completion" ]; then COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur")); return; fi
                case "$command" in
            \(cases)
                esac
                if [ "${COMP_WORDS[COMP_CWORD-1]}" = "--config" ] || [ "${COMP_WORDS[COMP_CWORD-1]}" = "--output" ]; then
                    COMPREPLY=($(compgen -f -- "$cur")); return
                fi
                COMPREPLY=($(compgen -W "$opts" -- "$cur"))
            }
            complete -F _feedsync feedsync
            """
    }

    static var zsh: String {
        let commands = FeedsyncCLI.commands.map { "'\($0.words[0]):\($0.summary.replacingOccurrences(of: "'", with: "").replacingOccurrences(of: ":", with: "\\:"))'" }
        let cases = table.map { "    \"\($0.command.split(separator: " ")[0])\") _values 'option' \($0.options.map { "'\($0)'" }.joined(separator: " ")) ;;" }
        return """
            #compdef feedsync
            # feedsync completion for zsh: feedsync completion zsh > "${fpath[1]}/_feedsync"
            _feedsync() {
              local -a commands
              commands=(\(commands.joined(separator: " ")))
              if (( CURRENT == 2 )); then
                _describe 'command' commands
                return
              fi
              case "$words[2]" in
            \(cases.joined(separator: "\n"))
              esac
            }
            _feedsync "$@"
            """
    }

    static var fish: String {
        var lines = ["# feedsync completion for fish: feedsync completion fish > ~/.config/fish/completions/feedsync.fish"]
        for command in FeedsyncCLI.commands {
            let first = command.words[0]
            lines.append("complete -c feedsync -n '__fish_use_subcommand' -a '\(first)' -d '\(command.summary.replacingOccurrences(of: "'", with: ""))'")
            for option in command.options + [.helpFlag] {
                let needsValue = option.value == nil ? "" : " -r"
                let description = option.help.replacingOccurrences(of: "'", with: "")
                lines.append("complete -c feedsync -n '__fish_seen_subcommand_from \(first)' -l '\(option.name.dropFirst(2))'\(needsValue) -d '\(description)'")
            }
        }
        return lines.joined(separator: "\n")
    }
}
