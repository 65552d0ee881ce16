import App
import Core

/// The reader listener (`"serve"`) as a daemon service: it reads the store, so it starts after
/// the runtime and stops before it.
struct ReaderService: Service {
    let listener: HTTPListener
    let log: Logger

    var name: String { "reader" }
    var dependencies: [String] { ["runtime"] }

    func run(until shutdown: GracefulShutdown) async {
        listener.start()
        log.info("reader_listening", ["address": "\(listener.address.isIPv6 ? "[\(listener.address.host)]" : listener.address.host):\(listener.port)"])
        await shutdown.requested()
        listener.stop()
    }
}
