import App
import Core
import Foundation

/// `feedsync posts`: the newest posts from the local database.
enum PostsCommand: Command {
    static let words = ["posts"]
    static let summary = "List the newest stored posts."
    static let synopsis = "posts [--config PATH] [--feed NAME] [--limit N] [--unread] [--json]"
    static let options: [CommandLineOptions.Spec] = [
        .config, .feed, .init("--limit", value: "N", "how many posts (default 20, at most 100000)"),
        .init("--unread", "only posts not marked read"), .json,
    ]

    /// A post as `--json` prints it.
    struct Row: Encodable {
        struct Author: Encodable { var id, handle, displayName: String; var avatarURL: URL? }
        struct Counts: Encodable { var replies, reposts, likes, quotes: Int }
        struct VideoRow: Encodable {
            var id, title: String
            var durationSeconds: Double
            var streamURL: URL
            var thumbnailURL: URL?
            var sizeBytes: Int64?
            var width, height: Int?
            var framesPerSecond: Double?
        }
        struct Repost: Encodable { var by: Author; var originalID: String; var at: Date? }
        struct Attachment: Encodable {
            var kind: String
            var url: URL
            var previewURL: URL?
            var description, title, mimeType: String?
            var sizeBytes: Int64?
            var width, height: Int?
        }
        var feed, id: String
        var author: Author
        var text: String
        var createdAt: Date
        var editedAt: Date?
        var replyTo: String?
        var counts: Counts
        var videoIDs: [String]
        var videos: [VideoRow]
        var html, contentWarning, language, visibility: String?
        var repost: Repost?
        var attachments: [Attachment]
        var title: String?
        var url: URL?
        var quoteOf: String?
        var labels: [String]
        var read: Bool

        init(_ stored: StoredPost) {
            let post = stored.post
            feed = stored.feed
            id = post.id.rawValue
            author = Self.author(post.author)
            text = post.text
            createdAt = post.createdAt
            editedAt = post.editedAt
            replyTo = post.replyTo?.rawValue
            counts = Counts(replies: post.counts.replies, reposts: post.counts.reposts, likes: post.counts.likes, quotes: post.counts.quotes)
            videoIDs = post.videoIDs.map(\.rawValue)
            videos = stored.videos.map {
                VideoRow(id: $0.id.rawValue, title: $0.title, durationSeconds: $0.duration, streamURL: $0.streamURL,
                         thumbnailURL: $0.thumbnailURL, sizeBytes: $0.sizeBytes, width: $0.width, height: $0.height,
                         framesPerSecond: $0.framesPerSecond)
            }
            html = post.html
            contentWarning = post.contentWarning
            language = post.language
            visibility = post.visibility?.rawValue
            repost = post.repost.map { Repost(by: Self.author($0.by), originalID: $0.originalID.rawValue, at: $0.at) }
            attachments = post.attachments.map {
                Attachment(kind: $0.kind, url: $0.url, previewURL: $0.previewURL, description: $0.description, title: $0.title,
                           mimeType: $0.mimeType, sizeBytes: $0.sizeBytes, width: $0.width, height: $0.height)
            }
            title = post.title
            url = post.url
            quoteOf = post.quoteOf?.rawValue
            labels = post.labels
            read = stored.isRead
        }

        static func author(_ user: User) -> Author {
            Author(id: user.id.rawValue, handle: user.handle, displayName: user.displayName, avatarURL: user.avatarURL)
        }
    }

    static func run(_ options: CommandLineOptions) async throws -> ExitStatus {
        guard options.positionals.isEmpty else { throw UsageError("posts takes no arguments", usage: usage) }
        let limit = try options.int("--limit", in: 1...100_000, default: 20, usage: usage)
        let posts = try await withRuntime(options, localOnly) { runtime in
            try await checkFeedOption(options, runtime, usage: usage)
            return try await runtime.store.posts(matching: PostQuery(feed: options["--feed"], limit: limit, unreadOnly: options.has("--unread")))
        }
        if options.has("--json") {
            try printJSON(posts.map(Row.init))
            return .ok
        }
        for stored in posts {
            let post = stored.post
            let flags = [stored.isRead ? nil : "unread", post.editedAt == nil ? nil : "edited",
                         post.videoIDs.isEmpty ? nil : "\(post.videoIDs.count) video",
                         post.repost.map { "shared by @\($0.by.handle)" }, post.contentWarning.map { "CW: \($0)" }].compactMap { $0 }
            // Text from servers is data: any control sequence in it is shown escaped, never run.
            let text = Terminal.safe(post.text.replacingOccurrences(of: "\n", with: " "), limit: 199)
            print("\(stored.feed)/\(Terminal.safe(post.id.rawValue, limit: 200))  \(formatted(post.createdAt))  "
                  + "@\(Terminal.safe(post.author.handle, limit: 100))"
                  + (flags.isEmpty ? "" : "  [\(Terminal.safe(flags.joined(separator: ", "), limit: 300))]"))
            print("    \(text)")
        }
        return .ok
    }
}
