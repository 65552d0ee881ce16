import Core
import Foundation
import IntegrationKit

/// The embeds of a post view (`app.bsky.embed.*#view`), read with the forward-only ``JSONReader``.
extension BlueskyFeedResponse {
    /// An `embed` view. Fields are read whatever `$type` says, since it may come last; the type
    /// then picks which of them make the embed.
    static func embed(_ reader: inout JSONReader, path: @autoclosure () -> String, depth: Int) throws -> BlueskyEmbedView? {
        if try reader.readNull() { return nil }
        try expectObject(&reader, path())
        // Quotes of quotes nest without end; two levels hold every embed a post view has.
        guard depth < 3 else {
            try reader.skipValue()
            return .unknown(type: nil)
        }
        var type: String?, images: [BlueskyImageView] = [], video = BlueskyVideoView(), external = BlueskyExternalView()
        var uri: String?, nested: BlueskyEmbedView?, media: BlueskyEmbedView?
        try reader.readObject { reader, key in
            switch key {
            case "$type": type = try reader.string("\(path()).$type")
            case "images": images = try list(&reader, "\(path()).images") { try image(&$0, path: "\(path()).images[]") }
            case "cid": video.cid = try reader.optionalString("\(path()).cid")
            case "playlist": video.playlist = try reader.optionalString("\(path()).playlist")
            case "thumbnail": video.thumbnail = try reader.optionalString("\(path()).thumbnail")
            case "alt": video.alt = try reader.optionalString("\(path()).alt")
            case "aspectRatio": video.aspectRatio = try aspectRatio(&reader, path: "\(path()).aspectRatio")
            case "external":
                try expectObject(&reader, "\(path()).external")
                try reader.readObject { reader, key in
                    switch key {
                    case "uri": external.uri = try reader.optionalString("\(path()).external.uri")
                    case "title": external.title = try reader.optionalString("\(path()).external.title")
                    case "description": external.description = try reader.optionalString("\(path()).external.description")
                    case "thumb": external.thumb = try reader.optionalString("\(path()).external.thumb")
                    default: try reader.skipValue()
                    }
                }
            case "uri": uri = try reader.optionalString("\(path()).uri")
            case "record": nested = try embed(&reader, path: "\(path()).record", depth: depth + 1)
            case "media": media = try embed(&reader, path: "\(path()).media", depth: depth + 1)
            default: try reader.skipValue()
            }
        }
        switch type {
        case "app.bsky.embed.images#view"?: return .images(images)
        case "app.bsky.embed.video#view"?: return .video(video)
        case "app.bsky.embed.external#view"?: return .external(external)
        // record#view holds one of viewRecord, viewNotFound, viewBlocked, viewDetached,
        // generatorView, listView…: each names its record by `uri`.
        case "app.bsky.embed.record#view"?: return .record(uri: nested?.recordURI)
        case "app.bsky.embed.recordWithMedia#view"?:
            return .recordWithMedia(uri: nested?.recordURI, media: media)
        default:
            // An embedded record's own view (viewRecord and the rest) carries only its uri.
            return uri.map { .record(uri: $0) } ?? .unknown(type: type)
        }
    }

    private static func image(_ reader: inout JSONReader, path: @autoclosure () -> String) throws -> BlueskyImageView {
        try expectObject(&reader, path())
        var image = BlueskyImageView()
        try reader.readObject { reader, key in
            switch key {
            case "thumb": image.thumb = try reader.optionalString("\(path()).thumb")
            case "fullsize": image.fullsize = try reader.optionalString("\(path()).fullsize")
            case "alt": image.alt = try reader.optionalString("\(path()).alt")
            case "aspectRatio": image.aspectRatio = try aspectRatio(&reader, path: "\(path()).aspectRatio")
            default: try reader.skipValue()
            }
        }
        return image
    }

    private static func aspectRatio(_ reader: inout JSONReader, path: @autoclosure () -> String) throws -> BlueskyAspectRatio? {
        if try reader.readNull() { return nil }
        try expectObject(&reader, path())
        var width: Int?, height: Int?
        try reader.readObject { reader, key in
            switch key {
            case "width": width = try reader.optionalInt("\(path()).width")
            case "height": height = try reader.optionalInt("\(path()).height")
            default: try reader.skipValue()
            }
        }
        guard let width, let height else { throw JSONReader.FieldError(reason: "\(path()) lacks a width or height") }
        return BlueskyAspectRatio(width: width, height: height)
    }
}

private extension BlueskyEmbedView {
    /// The URI an embedded record's view names.
    var recordURI: String? {
        if case .record(let uri) = self { return uri }
        return nil
    }
}
