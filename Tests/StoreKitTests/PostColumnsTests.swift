import Core
import Foundation
@testable import StoreKit
import Testing

/// The one Post⇄row codec: what it writes is what it reads back, by name, in any column order.
@Suite struct PostColumnsTests {
    /// Records what a codec writes, as a store's buffer would receive it.
    struct RecordingWriter: ColumnWriter {
        enum Value: Equatable { case text(String?), integer(Int64?) }
        var values: [Value] = []
        mutating func text(_ value: String?) { values.append(.text(value)) }
        mutating func integer(_ value: Int64?) { values.append(.integer(value)) }
    }

    /// A result row over recorded values, in an order of its own.
    struct ShuffledRow: ResultRow {
        var names: [String]
        var values: [RecordingWriter.Value]
        func text(_ column: Int) -> String? { if case .text(let value) = values[column] { value } else { nil } }
        func integer(_ column: Int) -> Int64? { if case .integer(let value) = values[column] { value } else { nil } }
        func real(_ column: Int) -> Double? { nil }
    }

    func makeFullPost() -> Post {
        let author = User(id: UserID("u1"), handle: "ann", displayName: "Ann", avatarURL: URL(string: "https://a.example/ann.png"))
        let booster = User(id: UserID("u2"), handle: "bob", displayName: "Bob")
        return Post(id: PostID("p1"), author: author, text: "hello\tworld", createdAt: Date(timeIntervalSince1970: 1_700_000_000.123),
                    editedAt: Date(timeIntervalSince1970: 1_700_000_100), replyTo: PostID("p0"),
                    counts: Post.Counts(replies: 1, reposts: 2, likes: 3, quotes: 4), videoIDs: [VideoID("v1"), VideoID("v\"2")],
                    html: "<p>hello</p>", contentWarning: "cw", language: "en", visibility: .followersOnly,
                    repost: Post.Repost(by: booster, originalID: PostID("orig"), at: Date(timeIntervalSince1970: 1_700_000_200)),
                    attachments: [Post.Attachment(kind: "image", url: URL(string: "https://m.example/i.png")!, width: 3, height: 4)],
                    title: "Title", url: URL(string: "https://example.org/p1"), quoteOf: PostID("q1"), labels: ["nsfw", "x\ny"])
    }

    @Test func writesOneValueOfTheDeclaredKindPerColumn() {
        var writer = RecordingWriter()
        PostColumns(makeFullPost(), dialect: .sqlite).write(to: &writer)
        #expect(writer.values.count == PostColumns.columns.count)
        for (value, column) in zip(writer.values, PostColumns.columns) {
            switch (value, column.kind) {
            case (.text, .text), (.integer, .integer): break
            default: Issue.record("column \(column.name) is written as \(value)")
            }
        }
    }

    @Test func readsBackByNameWhateverTheColumnOrder() throws {
        let post = makeFullPost()
        for dialect in [SQLDialect.sqlite, .postgres] {
            var writer = RecordingWriter()
            PostColumns(post, dialect: dialect).write(to: &writer)
            // Reversed, with a column of the query's own in front.
            let names = ["extra"] + PostColumns.names.reversed()
            let row = ShuffledRow(names: names, values: [.text("x")] + writer.values.reversed())
            let columns = PostColumns(row, at: try PostColumns.Positions(ColumnLayout(names)))
            #expect(columns == PostColumns(post, dialect: dialect))
            #expect(columns.post(author: post.author, repostedBy: post.repost?.by) == post)
        }
    }

    @Test func aQueryWithoutAColumnIsAnErrorNamingIt() {
        let names = PostColumns.names.filter { $0 != "labels" }
        #expect(throws: MissingColumn(name: "labels")) { try PostColumns.Positions(ColumnLayout(names)) }
    }
}
