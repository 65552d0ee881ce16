import App
import Core
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `feedsync serve`: the reader listener alone, over the same store, until SIGINT or SIGTERM;
/// for those who sync from cron with `feedsync pull` and run no daemon.
enum ServeCommand: Command {
    static let words = ["serve"]
    static let summary = "Serve the mirror to reader apps (the config's \"serve\" section) until stopped."
    static let synopsis = "serve [--config PATH]"
    static let options: [CommandLineOptions.Spec] = [.config]

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.isEmpty else { throw UsageError("serve takes no arguments", usage: usage) }
        try await withRuntime(options, localOnly) { runtime in
            guard let listener = try ReaderListener.make(for: runtime, log: Logger(sentences: { printError("feedsync: \(Terminal.safe($0))") })) else {
                throw ConfigError(file: runtime.configName, keyPath: "serve",
                                  message: "is missing: add \"serve\": {\"listen\": \"127.0.0.1:8765\"} to serve reader apps")
            }
            let stop = stopSignals()
            listener.start()
            let address = listener.address.isIPv6 ? "[\(listener.address.host)]" : listener.address.host
            try output.line("serving reader apps on http://\(address):\(listener.port)/; Ctrl-C stops")
            // Said now, not when serving ends: a script or a log behind a pipe waits for this line.
            try output.flush()
            for await _ in stop.signals { break }
            listener.stop()
            stop.sources.forEach { $0.cancel() }
        }
        return .ok
    }

    /// SIGINT and SIGTERM as a stream, their default action held off meanwhile.
    private static func stopSignals() -> (signals: AsyncStream<Int32>, sources: [any DispatchSourceSignal]) {
        var sources: [any DispatchSourceSignal] = []
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            sources.append(source)
        }
        return (stream, sources)
    }
}
