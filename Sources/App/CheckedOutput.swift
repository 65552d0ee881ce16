import Core
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A buffered writer on a file descriptor whose every write, flush and close is checked.
///
/// Everything a command prints goes through one of these, so output that is lost (a full
/// disk, `/dev/full`, a closed standard output, a file size limit) is always noticed and
/// becomes an ``OutputError`` (exit 74) instead of a silent exit 0. The first failure
/// sticks: later writes throw it again without touching the descriptor.
///
///     let output = CheckedOutput(descriptor: STDOUT_FILENO, name: "standard output")
///     try output.line("home/p1  2026-01-31T12:00:00Z  @ada")
///     try output.close()
///
/// Text (``line(_:)``, ``write(_:)-(String)``) passes through ``Redaction`` first, so nothing a
/// command prints carries a registered secret. Raw bytes (an export's pages of stored posts) are
/// written as they are.
///
/// - Important: `SIGPIPE` must be ignored (the executables do so at start), or a write to a
///   pipe without a reader kills the process before the failure can be reported.
public final class CheckedOutput: Sendable {
    /// What messages call the target: `standard output` or the file's path.
    public let name: String
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    /// On a terminal each write goes out at once, so lines appear as they are printed.
    private let immediate: Bool
    private let state = Mutex(State())

    private struct State {
        var buffer: [UInt8] = []
        var failure: OutputError?
        var closed = false
    }

    /// Bytes held before they are written: few system calls, and memory stays flat.
    public static let bufferSize = 1 << 16

    /// - Parameter ownsDescriptor: whether ``close()`` closes `descriptor` (standard output is
    ///   closed too: only `close` reports some errors of a file on a network disk).
    public init(descriptor: Int32, name: String, ownsDescriptor: Bool = true) {
        self.descriptor = descriptor
        self.name = name
        self.ownsDescriptor = ownsDescriptor
        immediate = isatty(descriptor) == 1
        state.withLock { $0.buffer.reserveCapacity(Self.bufferSize) }
    }

    /// The first failure, if any write, flush or close failed so far.
    public var failure: OutputError? { state.withLock { $0.failure } }

    /// Writes `text`, redacted, followed by a line break.
    public func line(_ text: String) throws {
        try write(text + "\n")
    }

    /// Writes `text` with every registered secret redacted.
    public func write(_ text: String) throws {
        var text = Redaction.redact(text)
        try text.withUTF8 { try write(UnsafeRawBufferPointer($0)) }
    }

    /// Appends `bytes`, writing the buffer out whenever it is full.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        try state.withLock { state in
            if let failure = state.failure { throw failure }
            if bytes.count >= Self.bufferSize {
                // A large piece (an export's page) goes out as it is, after what is buffered.
                try drain(&state)
                try writeAll(bytes, &state)
                return
            }
            state.buffer.append(contentsOf: bytes)
            if immediate || state.buffer.count >= Self.bufferSize { try drain(&state) }
        }
    }

    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Writes out whatever is buffered.
    public func flush() throws {
        try state.withLock { state in
            if let failure = state.failure { throw failure }
            try drain(&state)
        }
    }

    /// Flushes, then closes the descriptor (when owned) and checks that too. A second call
    /// does nothing; a failure seen before is thrown again.
    public func close() throws {
        try state.withLock { state in
            guard !state.closed else {
                if let failure = state.failure { throw failure }
                return
            }
            state.closed = true
            var failure = state.failure
            if failure == nil {
                do { try drain(&state) } catch let error as OutputError { failure = error }
            }
            if ownsDescriptor, Glibc.close(descriptor) != 0, failure == nil, errno != EINTR {
                failure = OutputError(target: name, code: errno)
            }
            state.failure = failure
            if let failure { throw failure }
        }
    }

    /// Forgets what is buffered and closes the descriptor without reporting: for output that
    /// is thrown away anyway (an export's temporary file after a failure).
    public func discard() {
        state.withLock { state in
            state.buffer.removeAll()
            guard !state.closed else { return }
            state.closed = true
            if ownsDescriptor { _ = Glibc.close(descriptor) }
        }
    }

    /// Syncs the written data to the disk (for a file about to replace another).
    public func sync() throws {
        try flush()
        try state.withLock { state in
            guard fsync(descriptor) == 0 else {
                let failure = OutputError(target: name, code: errno)
                state.failure = failure
                throw failure
            }
        }
    }

    private func drain(_ state: inout State) throws {
        // Taken out of the state while it is written, so no copy is made; its memory is kept.
        var pending: [UInt8] = []
        swap(&pending, &state.buffer)
        defer {
            pending.removeAll(keepingCapacity: true)
            state.buffer = pending
        }
        try pending.withUnsafeBytes { try writeAll($0, &state) }
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer, _ state: inout State) throws {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written <= 0 {
                if written < 0 && errno == EINTR { continue }
                // A write that takes nothing and reports nothing would loop: call it an I/O error.
                let failure = OutputError(target: name, code: written < 0 ? errno : EIO)
                state.failure = failure
                throw failure
            }
            offset += written
        }
    }
}
