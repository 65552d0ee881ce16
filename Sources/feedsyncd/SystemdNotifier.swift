import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Speaks the sd_notify protocol: datagrams such as `READY=1` to the socket named by
/// `NOTIFY_SOCKET`, written directly (no libsystemd). Without the variable it does nothing.
struct SystemdNotifier: Sendable {
    let socketPath: String?
    /// Half the watchdog interval systemd asked for (`WATCHDOG_USEC`), if it asked.
    let watchdogInterval: Duration?

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        if let text = environment["WATCHDOG_USEC"], let microseconds = Int64(text), microseconds > 0,
           environment["WATCHDOG_PID"].map({ Int32($0) == getpid() }) ?? true {
            watchdogInterval = .microseconds(microseconds / 2)
        } else {
            watchdogInterval = nil
        }
    }

    /// Sends one state message (`READY=1`, `STOPPING=1`, `WATCHDOG=1`, `STATUS=…`).
    func notify(_ state: String) {
        guard let socketPath else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        // A leading "@" names an abstract socket, whose address starts with a NUL byte.
        var path = Array(socketPath.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.enumerated() { buffer[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        _ = state.withCString { message in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, message, strlen(message), Int32(MSG_NOSIGNAL), $0, length)
                }
            }
        }
    }
}
