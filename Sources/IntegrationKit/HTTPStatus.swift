import Core
import Foundation

/// Translates an HTTP answer's status into Core's error vocabulary, the same way for every
/// integration; each may still read a status its API gives a meaning of its own first.
public enum HTTPStatus {
    /// The error for a status that is not a success, or `nil` for `2xx` and `304`.
    ///
    /// - `401`, `403`: `.unauthorized`; `429`: `.rateLimited` until `Retry-After` or the
    ///   announced reset; `400`, `404`, `410`, `422`: `.invalidRequest`; `5xx`, `408`:
    ///   `.unavailable` (retried); an unfollowed redirect or any other status:
    ///   `.contractViolation`.
    /// - Parameters:
    ///   - operation: what was being done, for the sentence.
    ///   - detail: what the error body said, already made safe and short, or `""`.
    public static func error(for response: HTTPResponse, _ operation: String, detail: String = "", now: Date = Date()) -> ServiceError? {
        let status = response.status
        let reason = "the server answered \(status)\(detail)"
        switch status {
        case 200..<300, 304: return nil
        case 401, 403: return ServiceError(.unauthorized, operation, reason)
        case 429: return ServiceError(.rateLimited(until: RateLimitPacer.retryDate(for: response, now: now)), operation, reason)
        case 400, 404, 410, 422: return ServiceError(.invalidRequest, operation, reason)
        case 408, 500..<600: return ServiceError(.unavailable, operation, reason)
        case 300..<400:
            let target = response.header("Location").map { " to \(Terminal.safe($0, limit: 200))" } ?? ""
            return ServiceError(.contractViolation, operation, "the server answered \(status)\(target), a redirect that was not followed")
        default: return ServiceError(.contractViolation, operation, reason)
        }
    }

    /// An error body's message, made safe to print and cut to 200 characters: `" (code: message)"`.
    public static func detail(_ parts: [String?]) -> String {
        let shown = parts.compactMap { $0 }.filter { !$0.isEmpty }.map { Terminal.safe($0, limit: 200) }
        return shown.isEmpty ? "" : " (\(shown.joined(separator: ": ")))"
    }
}
