import App
import Core
import Foundation

/// `feedsync add WHAT`: a feed from what a person would paste, in any form an integration
/// recognises (its descriptor's ``IntegrationDescriptor/addForms``): a site or feed URL, an
/// OPML file, `@user@server`, a Bluesky handle or DID.
///
/// The forms are tried in ``AddPrecedence`` order (those of a syntax of their own before one
/// that takes a file, and that before one that takes any address); the first that recognises
/// WHAT makes the feeds, and the config is changed in one edit, checked before it is saved.
enum AddCommand: Command {
    static let words = ["add"]

    /// Every form, in the registry's order: how help lists them.
    static var forms: [any AddForm] { FeedsyncCLI.registry.addForms }

    /// Every form, in the order they are tried.
    static var tried: [any AddForm] {
        forms.enumerated().sorted { ($0.element.precedence, $0.offset) < ($1.element.precedence, $1.offset) }.map(\.element)
    }

    static var summary: String { "Add a feed: \(listed(forms.map(\.summary), lastJoin: ", or "))." }

    static var synopsis: String {
        (["add WHAT [--name NAME] [--interval I]"] + formOptions.map { "[\($0.option.name)\($0.option.value.map { " \($0)" } ?? "")]" }
            + ["[--config PATH]"]).joined(separator: " ")
    }

    static var options: [CommandLineOptions.Spec] {
        [
            .config,
            .init("--name", value: "NAME", "the feed's name (default: from its title or handle; for an OPML file, a prefix NAME.)"),
            .init("--interval", value: "I", "how often to pull it, as the config writes durations (30m, 1h; default 5m)"),
        ] + formOptions.map { .init($0.option.name, value: $0.option.value, "\($0.labels.joined(separator: " or ")): \($0.option.help)") }
    }

    /// The options the forms read, each once, with the labels of the forms that read it and
    /// what it applies to, in the order the forms are tried.
    static var formOptions: [(option: CommandOption, labels: [String], appliesTo: String)] {
        var merged: [(option: CommandOption, labels: [String], phrases: [String])] = []
        for form in tried {
            for option in form.options {
                if let index = merged.firstIndex(where: { $0.option.name == option.option.name }) {
                    merged[index].labels.append(form.label)
                    merged[index].phrases.append(option.appliesTo)
                } else {
                    merged.append((option.option, [form.label], [option.appliesTo]))
                }
            }
        }
        return merged.map { ($0.option, $0.labels, together($0.phrases)) }
    }

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        let summaries = forms.map(\.summary)
        guard options.positionals.count == 1, let what = options.positionals.first?.trimmingCharacters(in: .whitespaces), !what.isEmpty else {
            throw UsageError("give one thing to add: \(listed(summaries, lastJoin: ", or "))", usage: usage)
        }
        if let name = options["--name"], let problem = FeedName.problem(name) {
            throw UsageError("--name \(problem)", usage: usage)
        }
        var editor = try ConfigEditor(configPath: options["--config"], registry: FeedsyncCLI.registry)
        let session = AddSession(options, usage: usage, editor: editor)
        guard let form = try tried.first(where: { try $0.recognises(what, session) }) else {
            throw UsageError("\"\(Terminal.safe(what, limit: 200))\" is not \(listed(summaries, lastJoin: " or "))", usage: usage)
        }
        // An option only other forms read would do nothing here: it is refused.
        for option in formOptions where options[option.option.name] != nil || options.has(option.option.name) {
            guard !form.options.contains(where: { $0.option.name == option.option.name }) else { continue }
            let noun = form.nounsRefusing[option.option.name] ?? form.noun
            throw UsageError("\(option.option.name) applies to \(option.appliesTo), not to \(noun)", usage: usage)
        }
        let added = try await form.add(what, session)
        try editor.addFeeds(added.feeds.map { feed in
            var feed = feed
            feed.interval = options["--interval"]
            return (feed.name, feed.editorFields)
        }, usage: usage)
        try await ConfigChange.commit(editor, options, output, saying: added.saying)
        for note in added.notes { try output.line(note) }
        return .ok
    }

    /// What an option of several forms applies to: `Mastodon and Bluesky accounts` when their
    /// phrases end in one word, else the phrases joined with `and`.
    static func together(_ phrases: [String]) -> String {
        let unique = phrases.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        let lasts = Set(unique.map { $0.split(separator: " ").last.map(String.init) ?? $0 })
        guard unique.count > 1, lasts.count == 1, let last = lasts.first,
              unique.allSatisfy({ $0.hasSuffix(" " + last) }) else { return unique.joined(separator: " and ") }
        return unique.map { String($0.dropLast(last.count + 1)) }.joined(separator: " and ") + " " + last
    }
}
