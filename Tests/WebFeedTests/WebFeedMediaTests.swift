import Core
import Foundation
import Testing
@testable import WebFeed

/// YouTube channel feeds, podcasts (the iTunes namespace) and Media RSS, mapped to Core.
@Suite struct WebFeedMediaTests {
    let base = URL(string: "https://www.example.com/feed")
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func mapped(_ name: String) throws -> WebFeedMapping.Mapped {
        WebFeedMapping.changes(try WebFeedParser.parse(try fixture(name), feedURL: base), firstSeen: [:], now: now)
    }

    @Test func aYouTubeEntryIsAPostWithOneVideo() throws {
        let result = try mapped("youtube-channel.xml")
        #expect(result.posts.count == 2)
        let post = try #require(result.posts.first { $0.id == "yt:video:dQw4w9WgXcQ" })
        #expect(post.videoIDs == ["youtube:dQw4w9WgXcQ"] && post.attachments.isEmpty)
        #expect(post.title == "Building a feed reader, part 2" && post.url?.absoluteString == "https://www.youtube.com/watch?v=dQw4w9WgXcQ")
        #expect(post.text == "We parse XML with a push parser.\nLinks: https://example.org/notes", "media:description is the text")
        #expect(post.counts.likes == 1234, "media:starRating count")
        let video = try #require(result.videos.first { $0.id == "youtube:dQw4w9WgXcQ" })
        #expect(video.streamURL.absoluteString == "https://www.youtube.com/watch?v=dQw4w9WgXcQ")
        #expect(video.title == "Building a feed reader, part 2")
        #expect(video.thumbnailURL?.absoluteString == "https://i2.ytimg.com/vi/dQw4w9WgXcQ/hqdefault.jpg")
        #expect(video.width == 640 && video.height == 390)
        #expect(video.viewCount == 56789 && video.rating == 5, "media:statistics views and media:starRating average")
        #expect(post.author.displayName == "Example Channel")
        #expect(result.videos.count == 2)
    }

    @Test func aPodcastEpisodeIsAPostWithItsAudioAndEpisodeFields() throws {
        let result = try mapped("podcast.xml")
        let episode = try #require(result.posts.first { $0.id == "22BCFEBF-44FB-4A19-8A33-E9F7DC7A9A32" })
        let audio = try #require(episode.attachments.first)
        #expect(episode.attachments.count == 1 && audio.kind == "audio" && audio.mimeType == "audio/x-m4a" && audio.sizeBytes == 8_727_310)
        #expect(audio.duration == 3723 && audio.episode == 4 && audio.season == 2, "itunes:duration, itunes:episode, itunes:season")
        #expect(audio.description == nil, "the episode's fields are fields, not text")
        #expect(audio.previewURL?.absoluteString == "https://example.com/podcasts/everything/mthood.jpg", "the episode's own image")
        #expect(episode.text == "Tips for trekking around the tallest mountain in Oregon", "itunes:summary when there is no description")
        #expect(episode.author.displayName == "The Sunset Explorers", "the show's itunes:author")
        let trailer = try #require(result.posts.first { $0.id == "D03EEC9B-B1B4-475B-92C8-54F853FA2A22" })
        #expect(trailer.attachments.first?.duration == 1079 && trailer.attachments.first?.episode == nil, "itunes:duration in seconds")
        #expect(trailer.attachments.first?.previewURL?.absoluteString == "https://applehosted.podcasts.apple.com/hiking_treks/artwork.png",
                "the show's artwork stands in")
        #expect(result.videos.isEmpty)
    }

    @Test func mediaRSSFillsVideosAndAttachments() throws {
        let result = try mapped("media-rss.xml")
        let film = try #require(result.posts.first { $0.id == "film" })
        #expect(film.videoIDs == ["https://cdn.example.com/film-1080.mp4", "https://cdn.example.com/film-720.mp4"])
        let video = try #require(result.videos.first { $0.id == "https://cdn.example.com/film-1080.mp4" })
        #expect(video.duration == 185 && video.sizeBytes == 123_456_789 && video.width == 1920 && video.height == 1080)
        #expect(video.thumbnailURL?.absoluteString == "https://cdn.example.com/film.jpg" && video.title == "The coast, filmed")
        let photos = try #require(result.posts.first { $0.id == "photos" })
        #expect(photos.attachments.map { "\($0.kind) \($0.url.absoluteString) \($0.width ?? 0)" }
                == ["image https://cdn.example.com/a.jpg 800", "image https://www.example.com/b.png 0"])
        let thumb = try #require(result.posts.first { $0.id == "thumb" })
        #expect(thumb.attachments.map(\.url.absoluteString) == ["https://cdn.example.com/thumb.jpg"])
    }

    @Test func durationsInTheFormsFeedsWrite() {
        #expect(XMLFeedParser.seconds("3723") == 3723 && XMLFeedParser.seconds("1:02:03") == 3723 && XMLFeedParser.seconds("62:03") == 3723)
        #expect(XMLFeedParser.seconds("1:60:00") == nil && XMLFeedParser.seconds("-5") == nil && XMLFeedParser.seconds("1:2:3:4") == nil)
        #expect(XMLFeedParser.seconds("soon") == nil && XMLFeedParser.seconds("1e300") == nil)
    }
}
