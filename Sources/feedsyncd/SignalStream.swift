import Dispatch
import Foundation

/// Delivers Unix signals as an async sequence, from DispatchSource rather than a C handler.
enum SignalStream {
    /// Starts watching `signals` (their default action is turned off) and yields each as it arrives.
    static func watch(_ signals: [Int32]) -> AsyncStream<Int32> {
        AsyncStream { continuation in
            let sources = Sources(signals.map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { continuation.yield(number) }
                source.resume()
                return source
            })
            continuation.onTermination = { _ in sources.cancel() }
        }
    }

    /// The dispatch sources, kept alive until the stream ends.
    // @unchecked: DispatchSource is thread-safe (libdispatch documents cancel as callable from
    // any thread) and the array is never mutated after init.
    private final class Sources: @unchecked Sendable {
        let sources: [any DispatchSourceSignal]
        init(_ sources: [any DispatchSourceSignal]) { self.sources = sources }
        func cancel() { sources.forEach { $0.cancel() } }
    }
}
