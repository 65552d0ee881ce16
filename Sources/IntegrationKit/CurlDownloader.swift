import CCurl
import Core
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What one download may cost.
public struct DownloadLimits: Sendable, Hashable {
    /// The most body bytes this request may write.
    public var maxBytes: Int64
    public var idleTimeout: TimeInterval
    public var deadline: TimeInterval
    /// What `maxBytes` is, for the sentence of a body past it: `the 1000 bytes its post announced`.
    public var bound: String

    public init(maxBytes: Int64, idleTimeout: TimeInterval, deadline: TimeInterval, bound: String? = nil) {
        self.maxBytes = maxBytes
        self.bound = bound ?? "the \(maxBytes) bytes allowed"
        self.idleTimeout = idleTimeout
        self.deadline = max(1, deadline)
    }
}

/// The head of a download's answer and how many body bytes went to the file.
public struct DownloadAnswer: Sendable {
    public var status: Int
    /// Header fields, names in lower case.
    public var headers: [String: String]
    public var written: Int64

    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// A download stopped for what the answer was: its reason is one sentence, and the caller
/// records it rather than trying again.
public struct DownloadRefusal: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// Streams a `GET`'s body to a file with libcurl, as ``CurlTransport`` sends requests: only
/// http(s), TLS verified, every byte counted as it arrives, an idle timeout and a deadline.
///
/// It follows no redirect: the caller sees each 3xx and decides (the media archive refuses
/// another scheme, and drops a token on the way to another origin). Only a 2xx body is
/// written, and only after `accept` approved the answer's head; any other body is read and
/// dropped, up to 64 KiB. Connections are kept for the next download.
public final class CurlDownloader: Sendable {
    private let handles = CurlHandlePool()
    private static let initialized: Bool = { curl_global_init(3) == CURLE_OK }()

    public init() { _ = Self.initialized }

    /// Downloads `request` (a `GET`), appending a 2xx body to the open descriptor `file`.
    ///
    /// - Parameter accept: told the status and header fields before the first body byte of a
    ///   2xx answer is written; a sentence it returns refuses the answer.
    /// - Throws: ``DownloadRefusal`` for an answer refused (by `accept`, or past `maxBytes`),
    ///   ``Core/ServiceError`` `.unavailable` for a transfer that failed (it may be resumed),
    ///   `CancellationError`.
    public func download(_ request: HTTPRequest, into file: Int32, limits: DownloadLimits,
                         accept: @escaping @Sendable (Int, [String: String]) -> String?) async throws -> DownloadAnswer {
        let transfer = FileTransfer(request: request, file: file, limits: limits, accept: accept)
        return try await handles.perform(origin: Origin(request.url)?.description ?? "", { transfer.run(on: $0) }, cancel: { transfer.cancel() })
    }

    /// Closes the idle connections.
    public func close() { handles.close() }
}

/// One download's state, reached from libcurl's callbacks through their context pointer.
///
/// `@unchecked Sendable`: everything but `cancelled` is touched only by the transfer's own
/// thread (inside `curl_easy_perform`); `cancelled` is atomic.
private final class FileTransfer: CurlReceiver, @unchecked Sendable {
    let request: HTTPRequest
    let file: Int32
    let limits: DownloadLimits
    let accept: @Sendable (Int, [String: String]) -> String?
    let operation: String
    private let cancelled = Atomic(false)
    private var status = 0
    private var headers: [String: String] = [:]
    private var headerBytes = 0
    private var written: Int64 = 0
    private var dropped = 0
    private var approved = false
    private var failure: (any Error)?

    init(request: HTTPRequest, file: Int32, limits: DownloadLimits, accept: @escaping @Sendable (Int, [String: String]) -> String?) {
        self.request = request
        self.file = file
        self.limits = limits
        self.accept = accept
        operation = "GET \(Origin(request.url)?.description ?? "?")\(request.url.path)"
    }

    func cancel() { cancelled.store(true, ordering: .relaxed) }

    var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    func run(on handle: UnsafeMutableRawPointer?) -> Result<DownloadAnswer, any Error> {
        guard let handle else { return .failure(ServiceError(.unavailable, operation, "libcurl could not start a transfer")) }
        do {
            try HeaderValue.check(request.url.absoluteString, "request URL", operation)
            for (name, value) in request.headers { try HeaderValue.check(value, name, operation, allowsSpace: true) }
        } catch {
            return .failure(error)
        }
        var list: UnsafeMutablePointer<curl_slist>?
        for (name, value) in request.headers { list = curl_slist_append(list, "\(name): \(value)") }
        defer { curl_slist_free_all(list) }
        let started = Date()
        let performed = CurlEasySetup.perform(handle, url: request.url, headers: list, idleTimeout: limits.idleTimeout,
                                              deadline: limits.deadline, receiver: self) { handle in
            [feedsync_setopt_long(handle, CURLOPT_HTTPGET, 1)]
        }
        guard let code = performed else { return .failure(ServiceError(.unavailable, operation, "libcurl refused the request's options")) }
        if let failure { return .failure(failure) }
        if isCancelled { return .failure(CancellationError()) }
        guard code == CURLE_OK else {
            var systemErrno = 0
            _ = feedsync_getinfo_long(handle, CURLINFO_OS_ERRNO, &systemErrno)
            let limits = HTTPLimits(idleTimeout: limits.idleTimeout, deadline: limits.deadline, maxBodyBytes: Int(clamping: limits.maxBytes))
            return .failure(CurlTransfer.error(for: code, systemErrno: Int32(truncatingIfNeeded: systemErrno), after: Date().timeIntervalSince(started),
                                               operation: operation, limits: limits))
        }
        return .success(DownloadAnswer(status: status, headers: headers, written: written))
    }

    private var isSuccess: Bool { (200..<300).contains(status) }

    func receive(body data: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int {
        guard isSuccess else {
            dropped += count
            return dropped <= 64 * 1024 ? count : 0
        }
        if !approved {
            if let reason = accept(status, headers) {
                failure = DownloadRefusal(reason)
                return 0
            }
            approved = true
        }
        guard written + Int64(count) <= limits.maxBytes else {
            failure = DownloadRefusal("the server sent more than \(limits.bound)")
            return 0
        }
        var offset = 0
        while offset < count, let data {
            let result = Glibc.write(file, data + offset, count - offset)
            if result < 0 {
                if errno == EINTR { continue }
                let reason = errno == ENOSPC || errno == EDQUOT ? "the disk is full" : "the file cannot be written (\(String(cString: strerror(errno))))"
                failure = ServiceError(.unavailable, operation, reason)
                return 0
            }
            offset += result
        }
        written += Int64(count)
        return count
    }

    func receive(header data: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int {
        headerBytes += count
        guard headerBytes <= 256 * 1024, let data else {
            failure = DownloadRefusal("the answer's header fields are larger than the 256 KiB accepted")
            return 0
        }
        switch HeaderLine(UnsafeRawBufferPointer(start: data, count: count)) {
        case .status(let line):
            headers.removeAll()
            status = Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        case .field(let name, let value) where !name.isEmpty:
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        case .field, .end, .other: break
        }
        return count
    }
}
