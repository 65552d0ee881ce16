/// The body of an error response: `{"error": "…"}`.
struct MastodonError: Decodable {
    var error: String
}
