import Core
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends requests over URLSession, keeping connections alive, under ``HTTPLimits``.
///
/// - Redirects are followed only within the request's origin and only for `GET`; anything
///   else fails naming the target, so `Authorization` never reaches another server.
/// - The body is counted as it streams in, after decompression, and the transfer is cut off
///   past ``HTTPLimits/maxBodyBytes``: an endless body or a compression bomb costs at most
///   the limit.
/// - Each request has a total deadline besides URLSession's idle timeout, so a server that
///   drips one byte a second cannot hold a sync for ever.
///
/// URLSession's cache and cookies are off: integrations do their conditional requests
/// themselves and must see the server's `304`.
public final class URLSessionTransport: HTTPTransport {
    public let limits: HTTPLimits
    private let session: URLSession
    private let transfers: TransferDelegate

    public init(limits: HTTPLimits) {
        self.limits = limits
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = limits.idleTimeout
        configuration.timeoutIntervalForResource = limits.deadline
        configuration.httpMaximumConnectionsPerHost = 2
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpShouldSetCookies = false
        transfers = TransferDelegate()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: transfers, delegateQueue: queue)
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        let operation = "\(request.method) \(Origin(request.url)?.description ?? "?")\(request.url.path)"
        let task = session.dataTask(with: urlRequest)
        let transfer = Transfer(request: urlRequest, limits: limits, operation: operation)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.continuation = continuation
                transfers.start(task, transfer)
            }
        } onCancel: {
            transfer.fail(CancellationError())
            task.cancel()
        }
    }

    public func close() async { session.finishTasksAndInvalidate() }
}

/// One request in flight: its data so far, and how it ended if it ended early.
///
/// Its mutable state is touched from the session's serial delegate queue, from the deadline
/// timer and from a cancelling task; the mutex makes those meet safely.
final class Transfer: Sendable {
    struct State {
        var continuation: CheckedContinuation<HTTPResponse, any Error>?
        var body = Data()
        var failure: (any Error)?
        var redirects = 0
    }

    let request: URLRequest
    let limits: HTTPLimits
    let operation: String
    let state = Mutex(State())

    init(request: URLRequest, limits: HTTPLimits, operation: String) {
        self.request = request
        self.limits = limits
        self.operation = operation
    }

    var continuation: CheckedContinuation<HTTPResponse, any Error>? {
        get { state.withLock { $0.continuation } }
        set { state.withLock { $0.continuation = newValue } }
    }

    /// Records why the transfer ends early; the first reason wins.
    func fail(_ error: any Error) {
        state.withLock { if $0.failure == nil { $0.failure = error } }
    }

    /// Ends the transfer once: with the recorded failure if there is one.
    func finish(_ result: Result<HTTPResponse, any Error>) {
        let (continuation, failure) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.continuation, state.failure)
        }
        if let failure { continuation?.resume(throwing: failure) } else { continuation?.resume(with: result) }
    }

    func violation(_ reason: String) -> ServiceError { ServiceError(.contractViolation, operation, reason) }
}

/// URLSession's delegate for every transfer of one session, keyed by task.
///
/// `@unchecked Sendable`: URLSession requires an `NSObject` subclass; its only state is the
/// mutex-guarded table.
final class TransferDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let transfers = Mutex<[Int: Transfer]>([:])

    func start(_ task: URLSessionDataTask, _ transfer: Transfer) {
        transfers.withLock { $0[task.taskIdentifier] = transfer }
        let deadline = transfer.limits.deadline
        DispatchQueue.global().asyncAfter(deadline: .now() + deadline) { [weak task, weak transfer] in
            guard let transfer else { return }
            transfer.fail(transfer.violation("no complete answer within \(Int(deadline)) s (deadlineSeconds)"))
            task?.cancel()
        }
        task.resume()
    }

    private func transfer(_ task: URLSessionTask) -> Transfer? {
        transfers.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        if let transfer = transfer(dataTask), response.expectedContentLength > Int64(transfer.limits.maxBodyBytes) {
            transfer.fail(transfer.violation("the answer announces \(response.expectedContentLength) bytes, more than the "
                                             + "\(transfer.limits.maxBodyBytes) allowed (maxResponseBytes)"))
            completionHandler(.cancel)
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let transfer = transfer(dataTask) else { return }
        let limit = transfer.limits.maxBodyBytes
        let tooLarge = transfer.state.withLock { state in
            guard state.failure == nil else { return false }
            guard state.body.count + data.count <= limit else { return true }
            state.body.append(data)
            return false
        }
        if tooLarge {
            transfer.fail(transfer.violation("the answer is larger than the \(limit) bytes allowed (maxResponseBytes)"))
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        guard let transfer = transfer(task) else { return completionHandler(nil) }
        let original = transfer.request
        let target = request.url.map { Terminal.safe($0.absoluteString, limit: 200) } ?? "an unreadable URL"
        let refusal: String?
        if original.httpMethod?.uppercased() ?? "GET" != "GET" {
            refusal = "the server redirected a \(original.httpMethod ?? "") request (\(response.statusCode)) to \(target); "
                + "only GET requests follow redirects"
        } else if let from = original.url.flatMap(Origin.init), request.url.flatMap(Origin.init) != from {
            refusal = "the server redirected (\(response.statusCode)) to \(target), outside \(from); "
                + "redirects are followed only within the same scheme, host and port"
        } else if transfer.state.withLock({ state in state.redirects += 1; return state.redirects > transfer.limits.maxRedirects }) {
            refusal = "the server redirected more than \(transfer.limits.maxRedirects) times in a row (last to \(target))"
        } else {
            refusal = nil
        }
        if let refusal {
            transfer.fail(transfer.violation(refusal))
            completionHandler(nil)
            task.cancel()
            return
        }
        // The same request, headers included, to the new URL of the same origin.
        var next = original
        next.url = request.url
        completionHandler(next)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let error {
            transfer.finish(.failure(ServiceError(.unavailable, transfer.operation, Self.describe(error, transfer.limits))))
            return
        }
        guard let http = task.response as? HTTPURLResponse else {
            transfer.finish(.failure(ServiceError(.invalidResponse, transfer.operation, "the answer is not HTTP")))
            return
        }
        var headers: [String: String] = [:]
        for case (let name as String, let value as String) in http.allHeaderFields { headers[name] = value }
        let body = transfer.state.withLock { $0.body }
        transfer.finish(.success(HTTPResponse(status: http.statusCode, headers: headers, body: body)))
    }

    /// A phrase for a transport failure, without URLError's internals.
    static func describe(_ error: any Error, _ limits: HTTPLimits) -> String {
        guard let urlError = error as? URLError else { return "the request failed (\(Terminal.safe(error.localizedDescription, limit: 200)))" }
        switch urlError.code {
        case .cannotConnectToHost: return "the connection was refused"
        case .timedOut: return "the request timed out (nothing arrived for \(Int(limits.idleTimeout)) s)"
        case .networkConnectionLost: return "the connection was lost"
        case .cannotFindHost, .dnsLookupFailed: return "the host name cannot be resolved"
        case .cancelled: return "the request was cancelled"
        case .httpTooManyRedirects: return "the server redirected too many times"
        case .cannotDecodeContentData, .cannotDecodeRawData: return "the compressed answer cannot be decoded"
        case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
             .serverCertificateHasUnknownRoot, .secureConnectionFailed:
            return "the TLS connection could not be verified"
        default: return "the request failed (URL error \(urlError.code.rawValue))"
        }
    }
}
