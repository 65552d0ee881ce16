import Core
import Foundation

/// The reader listener: the hardened ``HTTPListener`` with bodies and handlers in tasks, its
/// requests answered by the registry's serving integration over the runtime's store. Off
/// unless the config has a `"serve"` section; `feedsyncd` runs it beside syncing, and
/// `feedsync serve` alone.
public enum ReaderListener {
    /// The bounds reader apps are held to: 64 connections, 10 s for a request (head and body),
    /// 16 KiB of head, 64 KiB of body, 30 s for the store's answer.
    public static let limits = HTTPListener.Limits(maxConnections: 64, headTimeout: .seconds(10), maxHeadBytes: 16 * 1024,
                                                   writeStallTimeout: .seconds(5), writeTimeout: .seconds(60),
                                                   maxBodyBytes: 64 * 1024, answerTimeout: .seconds(30))

    /// Binds the listener the config asks for (not started), or `nil` when it asks for none.
    ///
    /// - Throws: ``ConfigError`` naming `serve.listen` when the address cannot be bound, or
    ///   `serve.tls.certificate` / `serve.tls.key` when a file is missing, unreadable, not PEM,
    ///   or the key is not the certificate's. A key file other users may read is logged.
    ///
    /// - Parameter catalog: what it serves, which the caller may replace on a reload; by default
    ///   the runtime's feeds and searches, for good.
    public static func make(for runtime: Runtime, log: Logger, catalog: ServedCatalog? = nil) throws -> HTTPListener? {
        guard let serve = runtime.serve, let serving = runtime.serving else { return nil }
        let served = catalog ?? ServedCatalog(feeds: runtime.servedFeeds, searches: runtime.searches)
        let tls = try tlsContext(for: runtime)
        if let files = serve.tls {
            for warning in TLSContext.warnings(files, keyPath: "serve.tls") { log.warn("tls_key_readable", ["warning": warning]) }
        }
        let answer = serving.makeHandler(ServingContext(store: runtime.store, catalog: served, log: log))
        do throws(ListenError) {
            return try HTTPListener(address: serve.listen, limits: limits, tls: tls) { request in
                let served = await answer(ServedRequest(method: request.method, path: request.path, query: request.query,
                                                        headers: request.headers, body: request.body, peer: request.peer))
                return HTTPListener.Response(status: served.status, contentType: served.contentType, pieces: [served.body],
                                             headers: served.headers)
            }
        } catch {
            throw ConfigError(file: runtime.configName, keyPath: "serve.listen", message: error.description)
        }
    }

    /// The certificate and key `serve.tls` names, loaded; `nil` when the listener serves plain HTTP.
    ///
    /// - Throws: ``ConfigError`` naming `serve.tls.certificate` or `serve.tls.key` (exit 78).
    public static func tlsContext(for runtime: Runtime) throws -> TLSContext? {
        guard let files = runtime.serve?.tls else { return nil }
        do throws(TLSError) {
            return try TLSContext(files)
        } catch {
            throw ConfigError(file: runtime.configName, keyPath: "serve.tls.\(error.key)", message: error.description)
        }
    }
}
