import IntegrationKit

extension HTMLText.Options {
    /// How a status's HTML reads as text: IntegrationKit's one renderer, with the white space
    /// kept as written.
    ///
    /// Mastodon writes a status's line breaks as `<br>` and its paragraphs as `<p>`, so its HTML
    /// holds no white space of its own: what there is was typed by the author (two spaces, a
    /// line break a remote server left in), and is kept. The rest of a status's markup needs
    /// nothing of its own: a mention (`<span class="h-card"><a …>@<span>ada</span></a></span>`)
    /// reads `@ada` and a hashtag (`<a … class="mention hashtag">#<span>tag</span></a>`) `#tag`;
    /// a link whose `invisible` and `ellipsis` spans the web client uses to shorten it reads as
    /// its whole URL, which is what a search should find.
    static let mastodon = HTMLText.Options(whiteSpace: .preserve)
}
