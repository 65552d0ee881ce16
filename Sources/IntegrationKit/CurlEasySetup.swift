import CCurl
import Foundation

/// What libcurl's callbacks reach during one transfer: ``CurlTransfer`` (a request's answer in
/// memory) and ``CurlDownloader``'s file transfer (a body streamed to a file).
///
/// Every callback runs on the transfer's own thread, inside `curl_easy_perform`.
protocol CurlReceiver: AnyObject {
    /// libcurl's write callback: takes `count` decoded body bytes; anything but `count` stops the transfer.
    func receive(body data: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int
    /// libcurl's header callback: one line of the head; anything but `count` stops the transfer.
    func receive(header data: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int
    /// Whether the transfer is to stop now (read from the progress callback, so atomically).
    var isCancelled: Bool { get }
}

/// The options every transfer of ours shares, set on an easy handle in one place: only
/// http(s), no redirect followed by libcurl, no signals, our user agent, the connect and idle
/// timeouts and the deadline, the header list, and the body, header and progress callbacks
/// reaching a ``CurlReceiver``.
enum CurlEasySetup {
    /// Resets `handle`, sets the shared options then `options` (the transfer's own: its method,
    /// its size cap), and performs the transfer.
    ///
    /// - Parameter options: set after the shared ones, on the reset handle.
    /// - Returns: `nil` when libcurl refused an option (nothing was sent), else what
    ///   `curl_easy_perform` returned.
    static func perform(_ handle: UnsafeMutableRawPointer, url: URL, headers: UnsafeMutablePointer<curl_slist>?,
                        idleTimeout: TimeInterval, deadline: TimeInterval, receiver: any CurlReceiver,
                        options: (UnsafeMutableRawPointer) -> [CURLcode]) -> CURLcode? {
        curl_easy_reset(handle)
        // The callbacks' context: the receiver as an existential in memory that lives while the
        // transfer runs, so a callback reaches it with no dynamic cast.
        var reached = receiver
        return withUnsafeMutablePointer(to: &reached) { pointer -> CURLcode? in
            let context = UnsafeMutableRawPointer(pointer)
            let setup = [
                feedsync_setopt_string(handle, CURLOPT_URL, url.absoluteString),
                feedsync_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
                feedsync_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0),
                feedsync_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
                feedsync_setopt_string(handle, CURLOPT_USERAGENT, "feedsync"),
                feedsync_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(idleTimeout * 1000)),
                feedsync_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1),
                feedsync_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, max(1, Int(idleTimeout))),
                feedsync_setopt_long(handle, CURLOPT_TIMEOUT_MS, Int(deadline * 1000)),
                feedsync_setopt_list(handle, CURLOPT_HTTPHEADER, headers),
                feedsync_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
                    context!.assumingMemoryBound(to: (any CurlReceiver).self).pointee.receive(body: data, size * count)
                },
                feedsync_setopt_pointer(handle, CURLOPT_WRITEDATA, context),
                feedsync_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
                    context!.assumingMemoryBound(to: (any CurlReceiver).self).pointee.receive(header: data, size * count)
                },
                feedsync_setopt_pointer(handle, CURLOPT_HEADERDATA, context),
                feedsync_setopt_long(handle, CURLOPT_NOPROGRESS, 0),
                feedsync_setopt_progress_callback(handle) { context, _, _, _, _ in
                    context!.assumingMemoryBound(to: (any CurlReceiver).self).pointee.isCancelled ? 1 : 0
                },
                feedsync_setopt_pointer(handle, CURLOPT_XFERINFODATA, context),
            ] + options(handle)
            guard setup.allSatisfy({ $0 == CURLE_OK }) else { return nil }
            return curl_easy_perform(handle)
        }
    }
}
