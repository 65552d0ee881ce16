import IntegrationKit

/// A media attachment (`MediaAttachment` entity); `meta` varies by type and server, and only
/// `meta.original` is kept.
struct MastodonMediaAttachment {
    struct Original {
        var width: Int?
        var height: Int?
        var frameRate: String?
        var duration: Double?
    }

    var id: String
    var type: String
    var url: String?
    var previewURL: String?
    var remoteURL: String?
    var description: String?
    var original: Original?
}

extension MastodonMediaAttachment {
    private enum Field: String, CaseIterable { case id, type, url, previewURL = "preview_url", remoteURL = "remote_url", description, meta }
    private static let fields = JSONKeys<Field>()

    /// Reads an attachment object; `path` names it in a skip reason (`media_attachments`).
    ///
    /// - Throws: `JSONReader.FieldError` for a missing or mistyped field, `SyntaxError` for bad JSON.
    init(reading reader: inout JSONReader, path: String) throws {
        try reader.expectObject(path)
        var id: String?, type: String?, url: String?, preview: String?, remote: String?, description: String?
        var original: Original?
        try reader.readObject(Self.fields) { reader, field in
            switch field {
            case .id?: id = try reader.requiredString("\(path).id")
            case .type?: type = try reader.requiredString("\(path).type")
            case .url?: url = try reader.stringOrNull("\(path).url")
            case .previewURL?: preview = try reader.stringOrNull("\(path).preview_url")
            case .remoteURL?: remote = try reader.stringOrNull("\(path).remote_url")
            case .description?: description = try reader.stringOrNull("\(path).description")
            case .meta?:
                guard try reader.objectOrNull("\(path).meta") else { original = nil; return }
                original = nil
                try reader.readObject { reader, key in
                    guard key == "original" else { return try reader.skipValue() }
                    original = try Original(reading: &reader, media: path)
                }
            case nil: try reader.skipValue()
            }
        }
        guard let id else { throw JSONReader.FieldError(reason: "\(path).id is missing") }
        guard let type else { throw JSONReader.FieldError(reason: "\(path).type is missing") }
        self.init(id: id, type: type, url: url, previewURL: preview, remoteURL: remote, description: description,
                  original: original)
    }
}

extension MastodonMediaAttachment.Original {
    private enum Field: String, CaseIterable { case width, height, frameRate = "frame_rate", duration }
    private static let fields = JSONKeys<Field>()

    /// Reads `meta.original`; `nil` for `null`. `media` is the attachment's path.
    init?(reading reader: inout JSONReader, media: String) throws {
        guard try reader.objectOrNull("\(media).meta.original") else { return nil }
        var original = Self()
        try reader.readObject(Self.fields) { reader, field in
            switch field {
            case .width?: original.width = try reader.wholeNumberOrNull("\(media).meta.original.width")
            case .height?: original.height = try reader.wholeNumberOrNull("\(media).meta.original.height")
            case .frameRate?: original.frameRate = try reader.stringOrNull("\(media).meta.original.frame_rate")
            case .duration?: original.duration = try reader.numberOrNull("\(media).meta.original.duration")
            case nil: try reader.skipValue()
            }
        }
        self = original
    }
}
