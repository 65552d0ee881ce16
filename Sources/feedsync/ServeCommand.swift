import App
import Core
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `feedsync serve`: the reader listener alone, over the same store, until SIGINT or SIGTERM;
/// for those who sync from cron with `feedsync pull` and run no daemon. SIGHUP loads the TLS
/// certificate and key again (a renewed certificate), keeping the pair in use if they fail.
enum ServeCommand: Command {
    static let words = ["serve"]
    static let summary = "Serve the mirror to reader apps (the config's \"serve\" section) until stopped; SIGHUP reloads its TLS certificate."
    static let synopsis = "serve [--config PATH]"
    static let options: [CommandLineOptions.Spec] = [.config]

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.isEmpty else { throw UsageError("serve takes no arguments", usage: usage) }
        try await withRuntime(options, localOnly) { runtime in
            guard let listener = try ReaderListener.make(for: runtime, log: Logger(sentences: { printError("feedsync: \(Terminal.safe($0))") })) else {
                throw ConfigError(file: runtime.configName, keyPath: "serve",
                                  message: "is missing: add \"serve\": {\"listen\": \"127.0.0.1:8765\"} to serve reader apps")
            }
            let stop = signals()
            listener.start()
            let address = listener.address.isIPv6 ? "[\(listener.address.host)]" : listener.address.host
            try output.line("serving reader apps on \(listener.tls == nil ? "http" : "https")://\(address):\(listener.port)/; Ctrl-C stops")
            // Said now, not when serving ends: a script or a log behind a pipe waits for this line.
            try output.flush()
            for await number in stop.signals {
                guard number == SIGHUP else { break }
                reloadCertificate(listener.tls)
            }
            listener.stop()
            stop.sources.forEach { $0.cancel() }
        }
        return .ok
    }

    /// Loads the certificate and key again, saying so in one line either way.
    private static func reloadCertificate(_ tls: TLSContext?) {
        guard let tls else { return }
        do throws(TLSError) {
            try tls.reload()
            for warning in TLSContext.warnings(tls.files, keyPath: "serve.tls") { printError("feedsync: warning: \(Terminal.safe(warning))") }
            printError("feedsync: loaded the TLS certificate \(Terminal.safe(tls.files.certificate)) again")
        } catch {
            printError("feedsync: serve.tls.\(error.key): \(Terminal.safe(error.description)); kept the certificate in use")
        }
    }

    /// SIGINT, SIGTERM and SIGHUP as a stream, their default action held off meanwhile.
    private static func signals() -> (signals: AsyncStream<Int32>, sources: [any DispatchSourceSignal]) {
        var sources: [any DispatchSourceSignal] = []
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        for number in [SIGINT, SIGTERM, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            sources.append(source)
        }
        return (stream, sources)
    }
}
