import CCurl
import Core
import Foundation
import Synchronization

extension CurlTransport: EventStreamTransport {
    /// Holds `request` open as a `text/event-stream` on a thread of its own, parsing the body as
    /// it arrives (see ``ServerSentEventParser``), under `limits`.
    ///
    /// The stream uses an easy handle of its own (a connection that lasts hours is not returned
    /// to the pool), follows no redirect, and asks for no compression, so each event is handed
    /// over as soon as its bytes arrive.
    public func eventStream(_ request: HTTPRequest, limits: EventStreamLimits) -> EventStream {
        let pending = PendingBytes()
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: EventStreamMessage.self, throwing: (any Error).self)
        let transfer = CurlEventStreamTransfer(request: request, limits: limits, pending: pending, continuation: continuation)
        continuation.onTermination = { _ in transfer.cancel() }
        Thread.detachNewThread {
            let handle = curl_easy_init()
            defer { curl_easy_cleanup(handle) }
            transfer.run(on: handle)
        }
        return EventStream(base: stream, pending: pending)
    }
}

/// One event stream's state, reached from libcurl's callbacks through their context pointer.
///
/// `@unchecked Sendable`: everything but `cancelled` is touched only by the transfer's own
/// thread (inside `curl_easy_perform`); `cancelled` is atomic, and the continuation is Sendable.
final class CurlEventStreamTransfer: @unchecked Sendable {
    let request: HTTPRequest
    let limits: EventStreamLimits
    let operation: String
    private let pending: PendingBytes
    private let continuation: AsyncThrowingStream<EventStreamMessage, any Error>.Continuation
    private let cancelled = Atomic(false)
    private var parser: ServerSentEventParser
    private var headers: [String: String] = [:]
    private var headersDone = false
    private var status = 0
    /// An error answer's body, kept (bounded) for its message.
    private var errorBody = Data()
    private var failure: (any Error)?
    private var started = Date()
    /// When the stream last showed a sign of life (see ``ServerSentEventParser/signsOfLife``).
    private var lastSignOfLife = Date()
    private var signsOfLife = 0
    /// When the last byte of the body arrived, sign of life or not.
    private var lastByte = Date.distantPast
    /// The easy handle while ``run(on:)`` runs.
    private var handle: UnsafeMutableRawPointer?

    init(request: HTTPRequest, limits: EventStreamLimits, pending: PendingBytes,
         continuation: AsyncThrowingStream<EventStreamMessage, any Error>.Continuation) {
        self.request = request
        self.limits = limits
        self.pending = pending
        self.continuation = continuation
        parser = ServerSentEventParser(maxEventBytes: limits.maxEventBytes, maxBytesWithoutEvent: limits.maxBytesWithoutEvent)
        operation = "streaming \(Origin(request.url)?.description ?? "?")\(request.url.path)"
    }

    func cancel() { cancelled.store(true, ordering: .relaxed) }

    /// Runs the stream until it ends, fails or is cancelled, then finishes the continuation.
    func run(on handle: UnsafeMutableRawPointer?) {
        guard let handle else {
            return continuation.finish(throwing: ServiceError(.unavailable, operation,
                                                              DescriptorLimit.reasonIfExhausted() ?? "libcurl could not start a transfer"))
        }
        self.handle = handle
        var list: UnsafeMutablePointer<curl_slist>?
        for (name, value) in request.headers { list = curl_slist_append(list, "\(name): \(value)") }
        defer { curl_slist_free_all(list) }
        let context = Unmanaged.passUnretained(self).toOpaque()
        started = Date()
        let setup = [
            feedsync_setopt_string(handle, CURLOPT_URL, request.url.absoluteString),
            feedsync_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
            feedsync_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0),
            feedsync_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
            feedsync_setopt_long(handle, CURLOPT_HTTPGET, 1),
            feedsync_setopt_string(handle, CURLOPT_USERAGENT, "feedsync"),
            feedsync_setopt_long(handle, CURLOPT_TCP_KEEPALIVE, 1),
            feedsync_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(limits.headersDeadline * 1000)),
            // "No byte for idleTimeout": fewer than one byte a second over that long. Bytes
            // that are no sign of life are caught by progress().
            feedsync_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1),
            feedsync_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, max(1, Int(limits.idleTimeout))),
            feedsync_setopt_list(handle, CURLOPT_HTTPHEADER, list),
            feedsync_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
                Unmanaged<CurlEventStreamTransfer>.fromOpaque(context!).takeUnretainedValue().receive(body: data, size * count)
            },
            feedsync_setopt_pointer(handle, CURLOPT_WRITEDATA, context),
            feedsync_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
                Unmanaged<CurlEventStreamTransfer>.fromOpaque(context!).takeUnretainedValue().receive(header: data, size * count)
            },
            feedsync_setopt_pointer(handle, CURLOPT_HEADERDATA, context),
            feedsync_setopt_long(handle, CURLOPT_NOPROGRESS, 0),
            feedsync_setopt_progress_callback(handle) { context, _, _, _, _ in
                Unmanaged<CurlEventStreamTransfer>.fromOpaque(context!).takeUnretainedValue().progress()
            },
            feedsync_setopt_pointer(handle, CURLOPT_XFERINFODATA, context),
        ]
        guard setup.allSatisfy({ $0 == CURLE_OK }) else {
            return continuation.finish(throwing: ServiceError(.unavailable, operation, "libcurl refused the request's options"))
        }
        let code = curl_easy_perform(handle)
        if cancelled.load(ordering: .relaxed) { return continuation.finish(throwing: CancellationError()) }
        if let failure { return continuation.finish(throwing: failure) }
        if let error = statusError() { return continuation.finish(throwing: error) }
        guard code == CURLE_OK else { return continuation.finish(throwing: error(for: code)) }
        // The server ended the answer: the stream is over, and the consumer reconnects.
        continuation.finish()
    }

    /// libcurl's progress callback, at least once a second: stops a cancelled stream, one whose
    /// server has not sent its header fields within the deadline, and one that has sent only
    /// field lines and blank lines (no event, no data, no comment) for the idle timeout.
    private func progress() -> Int32 {
        if cancelled.load(ordering: .relaxed) { return 1 }
        if !headersDone && Date().timeIntervalSince(started) > limits.headersDeadline {
            failure = ServiceError(.unavailable, operation, "the server sent no answer header fields within \(Int(limits.headersDeadline)) s")
            return 1
        }
        if headersDone && status == 200 && Date().timeIntervalSince(lastSignOfLife) > limits.idleTimeout {
            failure = ServiceError(.unavailable, operation, lastByte > lastSignOfLife
                ? "no event, data line or keep-alive comment arrived for \(Int(limits.idleTimeout)) s, only field lines or blank lines (streamIdleSeconds)"
                : "nothing arrived for \(Int(limits.idleTimeout)) s (streamIdleSeconds)")
            return 1
        }
        return 0
    }

    private func receive(header data: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int {
        guard let data else { return count }
        switch HeaderLine(UnsafeRawBufferPointer(start: data, count: count)) {
        case .status: headers.removeAll()
        case .end: return endOfHeaders() ? count : 0
        case .field(let name, let value) where headers.count < 200: headers[name] = value
        case .field, .other: break
        }
        return count
    }

    /// Checks the answer once its header fields are complete; `false` stops the transfer.
    private func endOfHeaders() -> Bool {
        var code = 0
        _ = feedsync_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &code)
        status = code
        // A 1xx answer's fields are followed by the real answer's.
        guard status >= 200 else { return true }
        headersDone = true
        guard status == 200 else { return true }   // the body is read (bounded) for the error's message
        let type = headers["content-type"]?.lowercased() ?? ""
        guard type.hasPrefix("text/event-stream") else {
            failure = ServiceError(.contractViolation, operation,
                                   "the server answered with \(Terminal.safe(type.isEmpty ? "no content type" : type, limit: 80)), not text/event-stream")
            return false
        }
        lastSignOfLife = Date()
        continuation.yield(.opened)
        return true
    }

    private func receive(body data: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int {
        guard let data else { return count }
        let bytes = UnsafeRawBufferPointer(start: data, count: count)
        guard status == 200 else {
            if errorBody.count < 64 * 1024 { errorBody.append(contentsOf: bytes.prefix(64 * 1024 - errorBody.count)) }
            return count
        }
        lastByte = Date()
        do {
            let events = try parser.feed(bytes)
            if parser.signsOfLife != signsOfLife {
                signsOfLife = parser.signsOfLife
                lastSignOfLife = Date()
            }
            for event in events {
                guard pending.added(PendingBytes.cost(of: event), limit: limits.maxPendingBytes) else {
                    failure = ServiceError(.contractViolation, operation, "the server sends events faster than they can be stored "
                                           + "(more than \(limits.maxPendingBytes >> 20) MiB waiting)")
                    return 0
                }
                continuation.yield(.event(event))
            }
        } catch let error as ServerSentEventParser.Failure {
            failure = ServiceError(.contractViolation, operation, error.reason)
            return 0
        } catch {
            failure = error
            return 0
        }
        return count
    }

    /// The error for an answer that was not `200`, with the server's message when it sent one.
    private func statusError() -> ServiceError? {
        guard headersDone, status != 200 else { return nil }
        let message = JSONReader.string(at: ["error"], in: errorBody)
        let response = HTTPResponse(status: status, headers: headers, body: errorBody)
        if let error = HTTPStatus.error(for: response, operation, detail: HTTPStatus.detail([message])) { return error }
        return ServiceError(.contractViolation, operation, "the server answered \(status), not 200, to a stream request")
    }

    private func error(for code: CURLcode) -> ServiceError {
        func unavailable(_ reason: String) -> ServiceError { ServiceError(.unavailable, operation, reason) }
        if [CURLE_COULDNT_CONNECT, CURLE_OUT_OF_MEMORY, CURLE_FAILED_INIT].contains(code), let reason = DescriptorLimit.reasonIfExhausted() {
            return unavailable(reason)
        }
        switch code {
        case CURLE_COULDNT_CONNECT: return unavailable("the connection was refused")
        case CURLE_COULDNT_RESOLVE_HOST: return unavailable("the host name cannot be resolved")
        case CURLE_OPERATION_TIMEDOUT:
            if !headersDone { return unavailable("the server sent no answer header fields within \(Int(limits.headersDeadline)) s") }
            return unavailable("nothing arrived for \(Int(limits.idleTimeout)) s (streamIdleSeconds)")
        case CURLE_BAD_CONTENT_ENCODING:
            return ServiceError(.invalidResponse, operation, "the stream's transfer encoding is broken")
        case CURLE_RECV_ERROR where headersDone:
            // libcurl reports chunked-encoding garbage as a receive error once the answer began.
            return ServiceError(.invalidResponse, operation, "the stream's transfer encoding is broken, or the connection was lost")
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CACERT_BADFILE:
            return unavailable("the TLS connection could not be verified")
        case CURLE_GOT_NOTHING: return unavailable("the server closed the connection without answering")
        case CURLE_PARTIAL_FILE: return unavailable("the stream was cut short")
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR: return unavailable("the connection was lost")
        default: return unavailable("the stream failed (\(Terminal.safe(String(cString: curl_easy_strerror(code)), limit: 120)))")
        }
    }
}
