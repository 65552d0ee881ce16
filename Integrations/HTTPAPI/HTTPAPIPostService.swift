import Core
import Foundation
import IntegrationKit

/// Reads the feed of the HTTP API page by page, conditionally: a poll with nothing new costs
/// one `304`.
struct HTTPAPIPostService: PostService {
    let client: HTTPAPIClient
    let pageSize: Int

    func page(after cursor: FeedCursor?, session: Session?) async throws -> FeedPage {
        guard let session else { throw ServiceError(.unauthorized, "fetching the feed from \(client.server)", "no session to send") }
        var query = [("limit", String(pageSize))]
        var headers = ["Authorization": "Bearer \(session.accessToken.revealed)", "Accept": "application/json"]
        if let cursor {
            query.append(("cursor", cursor.position))
            if let validator = cursor.validator { headers["If-None-Match"] = validator }
        }
        let request = client.request("GET", "/v1/feed", query: query, headers: headers)
        let operation = "fetching the feed page after \(cursor.map { "cursor \(Terminal.safe($0.position, limit: 100))" } ?? "the start") from"
        let response = try await client.send(request, operation)
        if response.status == 304 {
            guard let cursor else {
                throw ServiceError(.invalidResponse, "\(operation) \(client.server)", "the server answered 304 to an unconditional request")
            }
            return FeedPage(changes: [], nextCursor: cursor, hasMore: false)
        }
        do {
            return try FeedPage(APIFeedResponse(body: response.body), validator: response.header("ETag"))
        } catch let error as ServiceError {
            throw ServiceError(error.code, "\(operation) \(client.server)", error.reason)
        } catch let error as JSONReader.TooDeepError {
            throw ServiceError(.contractViolation, "\(operation) \(client.server)", error.reason)
        } catch let error as JSONReader.SyntaxError {
            throw ServiceError(.invalidResponse, "\(operation) \(client.server)",
                               "the response body is not JSON (\(error.reason) at byte \(error.offset))")
        } catch let error as JSONReader.FieldError {
            throw ServiceError(.invalidResponse, "\(operation) \(client.server)", "the page is not as API.md documents: \(error.reason)")
        }
    }
}
