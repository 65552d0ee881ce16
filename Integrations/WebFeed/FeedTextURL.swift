import Foundation

/// URL resolution for markup attributes.
enum FeedTextURL {
    static func resolve(_ value: String, base: URL?) -> String? {
        guard let url = URL(string: value, relativeTo: base)?.absoluteURL else { return nil }
        return url.absoluteString
    }
}
