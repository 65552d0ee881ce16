import CCurl
import Core
import Foundation
import Synchronization

/// Sends requests with libcurl, keeping connections alive, under ``HTTPLimits``.
///
/// libcurl is used directly rather than through URLSession, because on Linux URLSession hands
/// received data to its delegate through a queue with no back-pressure: a loopback server, or
/// a compression bomb, fills that queue with hundreds of megabytes before the first byte can
/// be counted. Here every decoded byte passes through one synchronous callback, so:
/// - the body is counted as it streams in, after decompression, and the transfer stops at
///   ``HTTPLimits/maxBodyBytes``: an endless body or a bomb costs at most the limit;
/// - each request has a total deadline besides the idle timeout, so a server that drips one
///   byte a second cannot hold a sync for ever;
/// - redirects are followed here, not by libcurl: only within the request's origin and only
///   for `GET`, so `Authorization` never reaches another server;
/// - only `http` and `https` are spoken, and TLS certificates are always verified.
///
/// Transfers run on threads of their own (libcurl blocks), never on Swift's cooperative pool.
public final class CurlTransport: HTTPTransport {
    public let limits: HTTPLimits
    public let traffic: (any TrafficObserver)?
    /// Idle easy handles: each keeps its connections open for the next request.
    private let handles = CurlHandlePool()
    private static let initialized: Bool = { curl_global_init(3) == CURLE_OK }()

    public init(limits: HTTPLimits, traffic: (any TrafficObserver)? = nil) {
        self.limits = limits
        self.traffic = traffic
        _ = Self.initialized
    }

    /// The process's one transport for `limits`, shared by every feed that asks for the same
    /// limits, so open connections grow with hosts and concurrency rather than with feeds.
    public static func shared(_ limits: HTTPLimits, in resources: SharedResources) -> CurlTransport {
        resources.value(for: "curl transport \(limits)") { CurlTransport(limits: limits, traffic: resources.traffic) }
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var current = request
        var redirects = 0
        while true {
            let response: HTTPResponse
            do {
                response = try await perform(current)
            } catch {
                if !(error is CancellationError) { traffic?.requestFinished(host: current.url.host ?? "", status: nil) }
                throw error
            }
            if let traffic {
                let host = current.url.host ?? ""
                traffic.requestFinished(host: host, status: response.status)
                if response.status == 429 || (response.status == 503 && response.header("Retry-After") != nil) {
                    traffic.rateLimitWait(host: host)
                }
            }
            guard current.followsRedirects, [301, 302, 303, 307, 308].contains(response.status), let location = response.header("Location") else { return response }
            current.url = try redirectTarget(location, from: current, status: response.status, redirects: &redirects)
        }
    }

    /// Closes the idle connections. A shared transport stays usable: transfers in flight keep
    /// their handles, and a later request opens a new connection.
    public func close() async {
        handles.close()
    }

    /// Where a redirect may lead: the same origin, for a `GET`, a few times in a row at most.
    private func redirectTarget(_ location: String, from request: HTTPRequest, status: Int, redirects: inout Int) throws -> URL {
        let operation = "\(request.method) \(Origin(request.url)?.description ?? "?")\(request.url.path)"
        let target = URL(string: location, relativeTo: request.url)?.absoluteURL
        let shown = Terminal.safe(target?.absoluteString ?? location, limit: 200)
        guard request.method == "GET" else {
            throw ServiceError(.contractViolation, operation, "the server redirected a \(request.method) request (\(status)) to \(shown); "
                               + "only GET requests follow redirects")
        }
        guard let target, let origin = Origin(request.url), origin.admits(target) else {
            throw ServiceError(.contractViolation, operation, "the server redirected (\(status)) to \(shown), outside "
                               + "\(Origin(request.url)?.description ?? "the server"); redirects are followed only within the same scheme, host and port")
        }
        redirects += 1
        guard redirects <= limits.maxRedirects else {
            throw ServiceError(.contractViolation, operation, "the server redirected more than \(limits.maxRedirects) times in a row (last to \(shown))")
        }
        return target
    }

    /// One request and its answer, whatever the status.
    private func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        // The last gate, whatever built the request: nothing goes on the wire that could end the
        // request line or split a header (the integrations check each value before storing it).
        let operation = "\(request.method) \(Origin(request.url)?.description ?? "?")"
        try HeaderValue.check(request.url.absoluteString, "request URL", operation)
        for (name, value) in request.headers {
            try HeaderValue.check(name, "name of a header", operation)
            try HeaderValue.check(value, "\(Terminal.safe(name, limit: 40)) header", operation, allowsSpace: true)
        }
        let transfer = CurlTransfer(request: request, limits: limits)
        return try await handles.perform(origin: Origin(request.url)?.description ?? "", { transfer.run(on: $0) }, cancel: { transfer.cancel() })
    }
}

/// One transfer's state, reached from libcurl's callbacks through their context pointer.
///
/// `@unchecked Sendable`: the body and headers are touched only by the transfer's own thread
/// (inside `curl_easy_perform`); only `cancelled` crosses threads, and it is atomic.
final class CurlTransfer: CurlReceiver, @unchecked Sendable {
    let request: HTTPRequest
    let limits: HTTPLimits
    let operation: String
    private let cancelled = Atomic(false)
    private var body = Data()
    private var headers: [(String, String)] = []
    private var headerBytes = 0
    /// Why a callback stopped the transfer.
    private var failure: (any Error)?

    /// The most header bytes an answer may have in all.
    static let maxHeaderBytes = 256 * 1024

    init(request: HTTPRequest, limits: HTTPLimits) {
        self.request = request
        self.limits = limits
        operation = "\(request.method) \(Origin(request.url)?.description ?? "?")\(request.url.path)"
    }

    func cancel() { cancelled.store(true, ordering: .relaxed) }

    var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    /// Performs the request on `handle`, blocking until the answer is complete or fails.
    func run(on handle: UnsafeMutableRawPointer?) -> Result<HTTPResponse, any Error> {
        guard let handle else {
            return .failure(ServiceError(.unavailable, operation, DescriptorLimit.reasonIfExhausted() ?? "libcurl could not start a transfer"))
        }
        var list: UnsafeMutablePointer<curl_slist>?
        for (name, value) in request.headers { list = curl_slist_append(list, "\(name): \(value)") }
        // libcurl would add "Expect: 100-continue" to larger bodies; servers need not support it.
        list = curl_slist_append(list, "Expect:")
        defer { curl_slist_free_all(list) }
        let started = Date()
        let performed = CurlEasySetup.perform(handle, url: request.url, headers: list, idleTimeout: limits.idleTimeout,
                                              deadline: limits.deadline, receiver: self) { handle in
            var options = [
                // Every encoding libcurl can decode; the decoded bytes are what the limit counts.
                feedsync_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, ""),
                feedsync_setopt_offset(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(limits.maxBodyBytes)),
            ]
            switch request.method {
            case "GET": options.append(feedsync_setopt_long(handle, CURLOPT_HTTPGET, 1))
            case "POST":
                let body = request.body ?? Data()
                options.append(feedsync_setopt_long(handle, CURLOPT_POST, 1))
                options.append(feedsync_setopt_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)))
                options.append(body.withUnsafeBytes {
                    feedsync_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!))
                })
            default:
                options.append(feedsync_setopt_string(handle, CURLOPT_CUSTOMREQUEST, request.method))
            }
            return options
        }
        guard let code = performed else {
            return .failure(ServiceError(.unavailable, operation, "libcurl refused the request's options"))
        }
        if let failure { return .failure(failure) }
        if isCancelled { return .failure(CancellationError()) }
        guard code == CURLE_OK else {
            var systemErrno = 0
            _ = feedsync_getinfo_long(handle, CURLINFO_OS_ERRNO, &systemErrno)
            return .failure(Self.error(for: code, systemErrno: Int32(truncatingIfNeeded: systemErrno), after: Date().timeIntervalSince(started),
                                       operation: operation, limits: limits))
        }
        var status = 0
        _ = feedsync_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        var fields: [String: String] = [:]
        // A field sent on several lines is one field, its values joined by commas (RFC 9110 §5.3).
        for (name, value) in headers { fields[name] = fields[name].map { "\($0), \(value)" } ?? value }
        return .success(HTTPResponse(status: status, headers: fields, body: body))
    }

    /// libcurl's write callback: appends decoded body bytes, or stops the transfer past the limit.
    func receive(body data: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int {
        guard body.count + count <= limits.maxBodyBytes else {
            failure = ServiceError(.contractViolation, operation, "the answer is larger than the \(limits.maxBodyBytes) bytes allowed (maxResponseBytes)")
            return 0
        }
        if let data { data.withMemoryRebound(to: UInt8.self, capacity: count) { body.append($0, count: count) } }
        return count
    }

    /// libcurl's header callback: one line at a time; a new status line (after `100 Continue`
    /// or a redirect's) starts the fields afresh.
    func receive(header data: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int {
        headerBytes += count
        guard headerBytes <= Self.maxHeaderBytes else {
            failure = ServiceError(.contractViolation, operation, "the answer's header fields are larger than the \(Self.maxHeaderBytes / 1024) KiB accepted")
            return 0
        }
        guard let data else { return count }
        switch HeaderLine(UnsafeRawBufferPointer(start: data, count: count)) {
        case .status: headers.removeAll()
        case .field(let name, let value) where !name.isEmpty: headers.append((name, value))
        case .field, .end, .other: break
        }
        return count
    }

    /// A phrase for a libcurl failure, without libcurl's internals.
    ///
    /// A process out of descriptors is said as such: libcurl reports a socket it could not make
    /// as a connection that failed (with the system's errno beside it, when it kept one), and
    /// a multi handle it could not make as out of memory. Downloads (``CurlDownloader``) say theirs the same way.
    static func error(for code: CURLcode, systemErrno: Int32, after seconds: TimeInterval, operation: String, limits: HTTPLimits) -> ServiceError {
        func unavailable(_ reason: String) -> ServiceError { ServiceError(.unavailable, operation, reason) }
        func violation(_ reason: String) -> ServiceError { ServiceError(.contractViolation, operation, reason) }
        if [CURLE_COULDNT_CONNECT, CURLE_OUT_OF_MEMORY, CURLE_FAILED_INIT, CURLE_COULDNT_RESOLVE_HOST].contains(code),
           let reason = DescriptorLimit.reason(forErrno: systemErrno) ?? DescriptorLimit.reasonIfExhausted() {
            return unavailable(reason)
        }
        switch code {
        case CURLE_COULDNT_CONNECT: return unavailable("the connection was refused")
        case CURLE_COULDNT_RESOLVE_HOST: return unavailable("the host name cannot be resolved")
        case CURLE_OPERATION_TIMEDOUT:
            // Past the deadline it is the server's doing; short of it, the line went quiet.
            if seconds >= limits.deadline - 0.5 { return violation("no complete answer within \(Int(limits.deadline)) s (deadlineSeconds)") }
            return unavailable("the request timed out (nothing arrived for \(Int(limits.idleTimeout)) s)")
        case CURLE_FILESIZE_EXCEEDED:
            return violation("the answer announces more than the \(limits.maxBodyBytes) bytes allowed (maxResponseBytes)")
        case CURLE_OUT_OF_MEMORY:
            // libcurl's answer to a single header field over 100 KB.
            return violation("the answer's header fields are larger than the 100 KB the client accepts")
        case CURLE_BAD_CONTENT_ENCODING: return ServiceError(.invalidResponse, operation, "the compressed answer cannot be decoded")
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT: return violation("the URL cannot be requested over http(s)")
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CACERT_BADFILE:
            return unavailable("the TLS connection could not be verified")
        case CURLE_GOT_NOTHING: return unavailable("the server closed the connection without answering")
        case CURLE_PARTIAL_FILE: return unavailable("the answer was cut short")
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR: return unavailable("the connection was lost")
        default: return unavailable("the request failed (\(Terminal.safe(String(cString: curl_easy_strerror(code)), limit: 120)))")
        }
    }
}
