import Core
import Foundation
@testable import PostgresStore
import PostgresTestSupport
import ProcessTestSupport
import Testing

/// The words a page brings for `posts.search` (``PostgresSearchWords``): what it vouches for, and
/// what it leaves to the server.
struct PostgresSearchWordsTests {
    /// Written as the server writes a vector: words in its (bytewise) order, each once with its positions.
    @Test func wordsAreLowercasedNumberedAcrossTheFieldsAndWrittenInTheServersOrder() {
        #expect(PostgresSearchWords.vector("Café DU monde, café!", nil, "Ünïcode 東京 Москва") ==
                "'café':1,4 'du':2 'monde':3 'ünïcode':5 'москва':7 '東京':6")
        #expect(PostgresSearchWords.vector("", nil, "") == "")
        #expect(PostgresSearchWords.vector("“Quoted” — ✨ done. (edited) #tag @ada x_y 50% a:b") ==
                "'50':8 'a':9 'ada':5 'b':10 'done':2 'edited':3 'quoted':1 'tag':4 'x':6 'y':7")
    }

    /// Each of these the server's parser reads as more than plain words (or lowercases in a way
    /// not vouched for): its vector is the server's to make.
    @Test(arguments: ["see https://example.com", "example.com", "ada@example.social", "well-known", "-5", "+5", "x .5",
                      "1.5", "v1.2.3", "1e5q", "x..", "q._", "<b>bold</b>", "&amp;", "/usr/bin", "~/notes", "a\u{200D}b", "❤\u{FE0F}", "İstanbul",
                      "Ελλάδα", "\u{9FA6}", "x\u{0}y", "soft\u{AD}hyphen", "²", "ǅ"])
    func textTheServerMayReadOtherwiseIsLeftToIt(_ text: String) {
        #expect(PostgresSearchWords.vector(text) == nil)
        #expect(PostgresSearchWords.vector("plain", nil, text) == nil, "in any field")
    }

    @Test func aWordTooLongToIndexOrTooOftenRepeatedIsLeftToTheServer() {
        #expect(PostgresSearchWords.vector(String(repeating: "a", count: 1_999)) != nil)
        #expect(PostgresSearchWords.vector(String(repeating: "a", count: 2_000)) == nil)
        #expect(PostgresSearchWords.vector(Array(repeating: "same", count: 249).joined(separator: " ")) != nil)
        #expect(PostgresSearchWords.vector(Array(repeating: "same", count: 250).joined(separator: " ")) == nil)
    }
}

/// Against a real server: the vectors vouched for are the server's own, and what the store keeps
/// in `posts.search` is the vector of the whole post, as the generated column made it.
@Suite(.needsPostgres)
struct PostgresSearchWordsServerTests {
    /// Seeded text from pieces of every kind the parser treats apart (words, numbers, every ASCII
    /// punctuation mark, hosts, URLs, e-mail addresses, tags, Latin, Greek, Cyrillic, CJK, emoji
    /// with and without joiners): each vector vouched for is the server's `to_tsvector`, written
    /// as the server writes it, and stored as the server would make it when sent in binary.
    @Test func everyVectorVouchedForIsTheServersOwn() async throws {
        let (store, _) = try await makeWorkers()
        let agreed = store.searchWordsAgreed.load(ordering: .relaxed)
        #expect(agreed, "the test server agreed on the probe")
        let ascii = (0x21 ... 0x7E).map { String(Character(Unicode.Scalar(UInt8($0)))) }
        let pieces = ascii + [" ", " ", "  ", "\n", "\t", "word", "Word", "WORD", "x1", "123", "1e5", "007", "Zürich", "naïve", "ÀÉÎÕÜ",
                              "ſ", "ı", "ŉ", "Ÿ", "ª", "µ", "×", "\u{A0}", "¡", "·", "«", "»", "Ελλάδα", "Москва", "ЁЖИК", "東京",
                              "カタカナ", "ひらがな", "、", "。", "「", "」", "—", "–", "“", "”", "…", "✨", "🚀", "🎉", "☕", "❤\u{FE0F}",
                              "👩\u{200D}💻", "\u{200B}", "e\u{301}", "http://", "https://x.org/a?b=c#d", "a.b", "x@y.z", "<b>",
                              "</b>", "&amp;", "&", "-", "--", "+", ".", "..", "_", "@", ":", "/", "~", "'", "\""]
        var random = SeededRandom(seed: 40)
        var texts: [String] = [], vectors: [String] = []
        var refused = 0
        for _ in 0 ..< 6_000 {
            let text = (0 ..< 1 + random.next(below: 12)).map { _ in pieces[random.next(below: pieces.count)] }.joined()
            guard let vector = PostgresSearchWords.vector(text) else { refused += 1; continue }
            texts.append(text)
            vectors.append(vector)
        }
        #expect(texts.count > 1_000 && refused > 1_000, "both kinds drawn: \(texts.count) vouched for, \(refused) left to the server")
        let differing = try await store.run("comparing vectors", """
            SELECT t FROM unnest($1::text[], $2::text[]) AS p(t, v) WHERE to_tsvector('simple', t)::text IS DISTINCT FROM v
            """, [pgArray(texts), pgArray(vectors)])
        #expect(differing.isEmpty, "the server makes other vectors of: \(differing.prefix(5))")
        // The same texts as posts, through long pages' binary COPY: every stored vector is the server's too.
        let author = User(id: "u1", handle: "ada", displayName: "Ada")
        let changes = texts.enumerated().map { index, text in
            FeedChange.upsert(Post(id: PostID("p\(index)"), author: author, text: text, createdAt: Date(timeIntervalSince1970: 1_700_000_000)))
        }
        for start in stride(from: 0, to: changes.count, by: 500) {
            let page = Array(changes[start ..< min(start + 500, changes.count)])
            #expect(page.count <= PostgresPreparedPage.jsonLimit || { if case .copy = store.prepare(makePage(page, cursor: "")).posts { true } else { false } }())
            _ = try await store.commit(makePage(page, cursor: "\(start)"), toFeed: "home")
        }
        try await expectWholeVectors(store, rows: changes.count)
    }

    /// Posts whose words the page brings and posts it leaves to the server, through the short
    /// (JSON) and long (COPY) paths, then edited, then their author renamed: every row's
    /// `search` is `to_tsvector` of its text, title, warning, handle and name, and search finds them.
    @Test func storedSearchIsThePostsWholeVectorThroughWritesEditsAndARename() async throws {
        let (store, _) = try await makeWorkers()
        let ada = User(id: "u1", handle: "ada", displayName: "Ada Lovelace")
        let grace = User(id: "u2", handle: "grace@example.social", displayName: "Grace")
        let texts = ["plain words only", "a link https://example.com/x in it", "Zürich café ✨", "well-known hyphen", "東京 and more"]
        func posts(_ count: Int, author: User, edited: Bool, at seconds: Double) -> [FeedChange] {
            (0 ..< count).map { index in
                .upsert(Post(id: PostID("p\(index)"), author: index % 2 == 0 ? author : grace,
                             text: texts[index % texts.count] + (edited ? " edited" : ""), createdAt: Date(timeIntervalSince1970: seconds),
                             contentWarning: index % 3 == 0 ? "CW: spoilers" : nil, title: index % 4 == 0 ? "A Title" : nil))
            }
        }
        _ = try await store.commit(makePage(posts(5, author: ada, edited: false, at: 1_700_000_000), cursor: "1"), toFeed: "home")
        _ = try await store.commit(makePage(posts(PostgresPreparedPage.jsonLimit + 10, author: ada, edited: false, at: 1_700_000_100),
                                            cursor: "2"), toFeed: "work")
        try await expectWholeVectors(store, rows: 5 + PostgresPreparedPage.jsonLimit + 10)
        _ = try await store.commit(makePage(posts(5, author: ada, edited: true, at: 1_700_000_200), cursor: "3"), toFeed: "home")
        let renamed = User(id: "u1", handle: "countess", displayName: "Augusta Ada King")
        _ = try await store.commit(makePage([.upsert(Post(id: "new", author: renamed, text: "renamed",
                                                          createdAt: Date(timeIntervalSince1970: 1_700_000_300)))], cursor: "4"), toFeed: "home")
        try await expectWholeVectors(store, rows: 6 + PostgresPreparedPage.jsonLimit + 10)
        #expect(try await store.run("reading the renamed author's posts", """
            SELECT count(*) FROM posts WHERE feed = 'home' AND author_handle = 'countess' AND search @@ to_tsquery('simple', 'augusta & edited')
            """) == [["3"]])
        #expect(try await store.search(SearchQuery(text: "zürich", feed: "home")).map(\.stored.post.id) == ["p2"])
    }

    /// A database whose character type is `C` lowercases only ASCII: it does not agree on the
    /// probe, so the store leaves every vector to it, and search is as right as before.
    @Test func aServerThatSplitsOrLowercasesOtherwiseMakesEveryVectorItself() async throws {
        let (other, _) = try await makeWorkers()
        let database = try await PostgresServer.makeDatabase()
        let name = database.name + "_c"
        try await other.run("making a database of character type C",
                            "CREATE DATABASE \(name) TEMPLATE template0 ENCODING 'UTF8' LC_CTYPE 'C' LC_COLLATE 'C'")
        let store = PostgresFeedStore(conninfo: database.url.replacingOccurrences(of: database.name, with: name))
        try await store.open()
        let agreed = store.searchWordsAgreed.load(ordering: .relaxed)
        #expect(!agreed)
        let author = User(id: "u1", handle: "ada", displayName: "ÀDA")
        _ = try await store.commit(makePage([.upsert(Post(id: "p1", author: author, text: "Zürich CAFÉ ÉTÉ", createdAt: Date()))],
                                            cursor: "1"), toFeed: "home")
        try await expectWholeVectors(store, rows: 1)
        #expect(try await store.run("reading the vector", "SELECT search::text FROM posts") == [["'ada':4 'cafÉ':2 'zürich':1 'Àda':5 'ÉtÉ':3"]],
                "É stays upper case here")
    }

    private func expectWholeVectors(_ store: PostgresFeedStore, rows: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let answer = try await store.run("checking the vectors", """
            SELECT count(*), count(*) FILTER (WHERE search IS DISTINCT FROM to_tsvector('simple', coalesce(text, '') || ' ' || coalesce(title, '')
                || ' ' || coalesce(content_warning, '') || ' ' || coalesce(author_handle, '') || ' ' || coalesce(author_name, '')))
            FROM posts
            """)
        #expect(answer == [["\(rows)", "0"]], sourceLocation: sourceLocation)
    }
}
