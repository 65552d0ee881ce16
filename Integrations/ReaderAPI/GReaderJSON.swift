import Core

/// The Google Reader API's JSON objects, written from Core's models (the API's own names).
enum GReaderJSON {
    /// The stream id of a feed: `feed/NAME`.
    static func streamID(of feed: String) -> String { "feed/" + feed }

    /// One entry of `subscription/list`: the feed, its group as its one category.
    static func subscription(_ feed: ServedFeed, to json: inout JSONWriter) {
        json.openObject()
        json.string("id", streamID(of: feed.name))
        json.string("title", feed.name)
        json.key("categories")
        json.openArray()
        if let group = feed.group {
            json.openObject()
            json.string("id", "user/-/label/\(group)")
            json.string("label", group)
            json.closeObject()
        }
        json.closeArray()
        json.string("url", streamID(of: feed.name))
        json.string("htmlUrl", "")
        json.string("iconUrl", "")
        json.closeObject()
    }

    /// One entry of `tag/list`.
    static func tag(_ id: String, type: String?, to json: inout JSONWriter) {
        json.openObject()
        json.string("id", id)
        json.string("type", type)
        json.closeObject()
    }
}
