import Core
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends requests to a server over URLSession, keeping connections alive between them.
///
/// URLSession's own cache is off: the client does its conditional requests itself and must
/// see the server's `304`.
final class URLSessionTransport: HTTPTransport {
    let baseURL: URL
    private let session: URLSession

    init(baseURL: URL, timeout: TimeInterval) {
        self.baseURL = baseURL
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpMaximumConnectionsPerHost = 1
        configuration.httpCookieAcceptPolicy = .never
        self.session = URLSession(configuration: configuration)
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let base = baseURL.absoluteString.hasSuffix("/") ? String(baseURL.absoluteString.dropLast()) : baseURL.absoluteString
        guard let url = URL(string: base + request.target) else {
            throw ServiceError(.invalidRequest, "\(request.method) \(request.path)", "cannot form a URL from \(base)")
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        do {
            let (data, response) = try await session.data(for: urlRequest)
            guard let http = response as? HTTPURLResponse else {
                throw ServiceError(.invalidResponse, "\(request.method) \(base)\(request.path)", "the answer is not HTTP")
            }
            var headers: [String: String] = [:]
            for case (let name as String, let value as String) in http.allHeaderFields { headers[name] = value }
            return HTTPResponse(status: http.statusCode, headers: headers, body: data)
        } catch let error as ServiceError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw ServiceError(.unavailable, "\(request.method) \(base)\(request.path)", Self.describe(error))
        }
    }

    func close() async { session.finishTasksAndInvalidate() }

    /// A phrase for a transport failure, without URLError's internals.
    private static func describe(_ error: any Error) -> String {
        guard let urlError = error as? URLError else { return "the request failed (\(error.localizedDescription))" }
        switch urlError.code {
        case .cannotConnectToHost: return "the connection was refused"
        case .timedOut: return "the request timed out"
        case .networkConnectionLost: return "the connection was lost"
        case .cannotFindHost, .dnsLookupFailed: return "the host name cannot be resolved"
        case .cancelled: return "the request was cancelled"
        case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
             .serverCertificateHasUnknownRoot, .secureConnectionFailed:
            return "the TLS connection could not be verified"
        default: return "the request failed (URL error \(urlError.code.rawValue))"
        }
    }
}
