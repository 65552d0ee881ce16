import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy on loopback in front of the test server's Unix socket, that can stop forwarding
/// while keeping its connections open: what a client sees of a server or a link that vanished
/// without a word (a half-open connection). The kernel still acknowledges what the client sends,
/// so only the client's own deadlines can tell.
///
/// Its threads are its own, never the cooperative pool's.
final class StallingProxy: @unchecked Sendable {
    // @unchecked: every mutable field is read and written under `lock`.
    let port: UInt16
    private let listener: Int32
    private let target: String
    private let lock = NSLock()
    private var descriptors: [Int32] = []
    private var generation = 0
    private var frozenBelow = 0
    private var stopped = false

    /// Listens on 127.0.0.1 on a free port, forwarding each connection to the Unix socket `target`.
    init(forwardingTo target: String) throws {
        self.target = target
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
        guard bound == 0, listen(listener, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        port = UInt16(bigEndian: address.sin_port)
        self.listener = listener
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Stops forwarding on every connection open now; later connections forward again.
    func freeze() {
        lock.withLock { frozenBelow = generation }
    }

    /// Closes everything: the listener and every connection.
    func stop() {
        let open: [Int32] = lock.withLock {
            stopped = true
            defer { descriptors = [] }
            return descriptors
        }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for descriptor in open { shutdown(descriptor, Int32(SHUT_RDWR)); close(descriptor) }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let server = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { path in
                target.utf8CString.withUnsafeBytes { path.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(path.count - 1))) }
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            let accepted: Int? = lock.withLock {
                guard !stopped, connected == 0 else { return nil }
                generation += 1
                descriptors += [client, server]
                return generation
            }
            guard let number = accepted else { close(client); close(server); continue }
            for (from, to) in [(client, server), (server, client)] {
                Thread { [self] in pump(from, to, number) }.start()
            }
        }
    }

    /// Copies bytes one way until either side closes; once frozen, reads on but forwards nothing.
    private func pump(_ from: Int32, _ to: Int32, _ connection: Int) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(from, &buffer, buffer.count)
            guard count > 0 else { return }
            let frozen = lock.withLock { connection <= frozenBelow || stopped }
            if frozen { continue }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { write(to, $0.baseAddress! + sent, count - sent) }
                guard written > 0 else { return }
                sent += written
            }
        }
    }
}
