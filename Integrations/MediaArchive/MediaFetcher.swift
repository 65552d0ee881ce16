import Core
import Foundation
import IntegrationKit
#if canImport(Glibc)
import Glibc
#endif

/// The media archive's files: fetches an address into the content-addressed folder.
///
/// Every answer is hostile, as a feed's is:
/// - a redirect is followed only to http(s), a few times at most, and the feed's token goes
///   only to the feed's own origin (``IntegrationKit/Origin``), never after a redirect away;
/// - every item is capped in bytes (`maxItemBytes`, and the size its post announced) and time;
/// - an answer whose `Content-Type` does not match what the post said is refused before a
///   byte of its body is written (an HTML page is not an image);
/// - bytes go to `.partial/`, resumed with `Range` on the next attempt, and take their final
///   name only when complete and their length checks out.
final class MediaFetcher: MediaFetching {
    let folder: ArchiveFolder
    let log: Logger
    private let downloader = CurlDownloader()
    /// Redirects one fetch follows at most.
    static let maxRedirects = 5

    init(folder: URL, log: Logger) throws {
        self.folder = try ArchiveFolder(folder)
        self.log = log
    }

    func fetch(_ item: MediaItem, limits: MediaLimits, credential: MediaCredential?) async -> MediaItem {
        var result = item
        result.attempts += 1
        do {
            let (digest, bytes, type) = try await (HLSPlaylist.isPlaylist(item.url) && item.kind == .video)
                ? HLSJoiner(fetcher: self).fetch(item, limits: limits, credential: credential)
                : fetchFile(item, limits: limits, credential: credential)
            result.digest = digest
            result.bytes = bytes
            result.mediaType = type
            result.status = .fetched
            result.reason = nil
            result.fetchedAt = Date()
        } catch let refusal as DownloadRefusal {
            folder.removePartial(of: item.url)
            result.status = .refused
            result.reason = refusal.reason
        } catch is CancellationError {
            result.status = .failed
            result.reason = "the fetch was stopped before it ended"
        } catch let error as ServiceError {
            if error.reason.contains("disk is full") { folder.removePartial(of: item.url) }
            result.status = .failed
            result.reason = error.reason
        } catch {
            result.status = .failed
            result.reason = "\(error)"
        }
        if result.status != .fetched {
            log.warn("media not fetched", ["url": Terminal.safe(item.url.absoluteString, limit: 200), "status": result.status.rawValue,
                                           "reason": Terminal.safe(result.reason ?? "", limit: 300)])
        }
        return result
    }

    /// Fetches one file, resuming its partial download, and installs it under its digest.
    func fetchFile(_ item: MediaItem, limits: MediaLimits, credential: MediaCredential?) async throws -> (String, Int64, String?) {
        let started = Date()
        let (file, resumed) = try folder.openPartial(of: item.url)
        defer { Glibc.close(file) }
        let cap = min(limits.maxItemBytes, item.expectedBytes.flatMap { $0 > 0 ? $0 : nil } ?? .max)
        let announced = cap < limits.maxItemBytes ? "the \(cap) bytes its post announced" : "the \(cap) bytes allowed (maxItemBytes)"
        guard resumed <= cap else { throw DownloadRefusal("the file is larger than \(announced)") }
        let answer = try await get(item.url, into: file, from: resumed, cap: cap, bound: announced, limits: limits, started: started,
                                   credential: credential) { status, headers in
            if let mismatch = MediaTypeCheck.mismatch(kind: item.kind, expected: item.expectedType, received: headers["content-type"]) {
                return mismatch
            }
            // A 200 to a Range request is the whole file again: start it afresh.
            if status == 200, resumed > 0 { ftruncate(file, 0) }
            return nil
        }
        var info = stat()
        guard fstat(file, &info) == 0 else { throw ArchiveError("the archive cannot read back the file of \(item.url.absoluteString)") }
        let size = Int64(info.st_size)
        if size > cap { throw DownloadRefusal("the server sent more than \(announced)") }
        if let total = Self.expectedTotal(answer, resumedFrom: resumed), total != size {
            if size > total { throw DownloadRefusal("the server sent \(size) bytes where it announced \(total)") }
            throw ServiceError(.unavailable, "GET \(item.url.absoluteString)", "the answer was cut short (\(size) of \(total) bytes)")
        }
        let digest = try folder.install(partialOf: item.url)
        return (digest, size, answer.header("content-type").map { Terminal.safe($0, limit: 100) })
    }

    /// The length the answer announced for the whole file, when it did.
    static func expectedTotal(_ answer: DownloadAnswer, resumedFrom offset: Int64) -> Int64? {
        if answer.status == 206, let range = answer.header("content-range"), let slash = range.lastIndex(of: "/") {
            return Int64(range[range.index(after: slash)...].trimmingCharacters(in: .whitespaces))
        }
        return answer.header("content-length").flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// GETs `url` into `file` from byte `offset`, following redirects to http(s) only, with the
    /// token only on the credential's own origin.
    ///
    /// - Parameter cap: the most body bytes one answer may bring (a resumed answer is checked
    ///   against it with the bytes before it, once it has come); `bound` says what the cap is.
    func get(_ url: URL, into file: Int32, from offset: Int64, cap: Int64, bound: String, limits: MediaLimits, started: Date,
             credential: MediaCredential?, accept: @escaping @Sendable (Int, [String: String]) -> String?) async throws -> DownloadAnswer {
        var current = url
        for _ in 0...Self.maxRedirects {
            var headers: [String: String] = [:]
            if offset > 0 { headers["Range"] = "bytes=\(offset)-" }
            if let credential, let origin = Origin(credential.server), origin.admits(current) {
                headers["Authorization"] = credential.authorization.revealed
            }
            let remaining = limits.deadline - Date().timeIntervalSince(started)
            guard remaining > 0 else { throw DownloadRefusal("no complete answer within \(Int(limits.deadline)) s") }
            let answer = try await downloader.download(HTTPRequest(url: current, headers: headers, followsRedirects: false), into: file,
                                                       limits: DownloadLimits(maxBytes: cap, idleTimeout: limits.idleTimeout, deadline: remaining,
                                                                              bound: bound),
                                                       accept: accept)
            switch answer.status {
            case 200, 206:
                if answer.status == 206, offset > 0, !(answer.header("content-range") ?? "").hasPrefix("bytes \(offset)-") {
                    throw DownloadRefusal("the server resumed at another byte than the \(offset) asked for")
                }
                return answer
            case 301, 302, 303, 307, 308:
                guard let location = answer.header("location"), let target = URL(string: location, relativeTo: current)?.absoluteURL else {
                    throw DownloadRefusal("the server redirected (\(answer.status)) without a usable Location")
                }
                guard let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https", target.host != nil else {
                    throw DownloadRefusal("the server redirected to \(Terminal.safe(target.absoluteString, limit: 120)); only http(s) is followed")
                }
                current = target
            case 416 where offset > 0:
                ftruncate(file, 0)
                throw ServiceError(.unavailable, "GET \(url.absoluteString)", "the server refused to resume (416); the next attempt starts afresh")
            default:
                throw ServiceError(.unavailable, "GET \(url.absoluteString)", "the server answered \(answer.status)")
            }
        }
        throw DownloadRefusal("the server redirected more than \(Self.maxRedirects) times in a row")
    }

    func removeFile(digest: String) throws { try folder.removeFile(digest: digest) }

    func removeStalePartials(olderThan age: TimeInterval) throws { try folder.removeStalePartials(olderThan: age) }

    func close() async { downloader.close() }
}
