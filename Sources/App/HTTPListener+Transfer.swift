import CSSL
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Bytes in and out of a connection: straight on the socket, or through its TLS session, whose
/// wants (a read that must first write, a write that must first read) become the events the
/// listener polls the socket for.
extension HTTPListener {
    /// What one read or write came to.
    enum Transfer {
        /// This many bytes moved.
        case bytes(Int)
        /// Nothing now: poll the socket for these events (`POLLIN` or `POLLOUT`) and try again.
        case wait(Int16)
        /// The client closed or reset the connection.
        case closed
        /// The TLS handshake failed; `plainHTTP` when the client spoke plain HTTP to the port.
        case handshakeFailed(plainHTTP: Bool)
    }

    /// Reads what arrived into `buffer` (a TLS session's first reads make its handshake).
    func receiveBytes(_ connection: Connection, into buffer: inout [UInt8]) -> Transfer {
        guard let ssl = connection.tls else {
            let count = buffer.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { return .bytes(count) }
            return count < 0 && (errno == EAGAIN || errno == EINTR) ? .wait(Int16(POLLIN)) : .closed
        }
        ERR_clear_error()
        let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
        return count > 0 ? .bytes(Int(count)) : Self.failure(ssl, count)
    }

    /// Writes what the socket takes of `bytes`.
    func sendBytes(_ connection: Connection, _ bytes: UnsafeRawBufferPointer) -> Transfer {
        guard let ssl = connection.tls else {
            let sent = send(connection.fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if sent >= 0 { return .bytes(sent) }
            return errno == EAGAIN || errno == EINTR ? .wait(Int16(POLLOUT)) : .closed
        }
        ERR_clear_error()
        let sent = SSL_write(ssl, bytes.baseAddress, Int32(min(bytes.count, Int(Int32.max))))
        return sent > 0 ? .bytes(Int(sent)) : Self.failure(ssl, sent)
    }

    /// Whether a TLS session holds bytes already read from the socket, which `poll` will not
    /// announce again.
    static func holdsBytes(_ connection: Connection) -> Bool {
        guard let ssl = connection.tls else { return false }
        return SSL_pending(ssl) > 0 || SSL_has_pending(ssl) == 1
    }

    /// Whether a TLS connection has not finished its handshake.
    static func isHandshaking(_ connection: Connection) -> Bool {
        guard let ssl = connection.tls else { return false }
        return SSL_is_init_finished(ssl) == 0
    }

    /// Tells a TLS client the answer is whole (`close_notify`), once, without waiting.
    static func notifyClose(_ connection: Connection) {
        guard let ssl = connection.tls, SSL_is_init_finished(ssl) == 1 else { return }
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }

    /// Frees a connection's TLS session, before its socket is closed.
    static func freeSession(_ connection: Connection) {
        guard let ssl = connection.tls else { return }
        SSL_free(ssl)
    }

    /// One try at sending `bytes` without waiting (a 408 or 503 on the way out), through the
    /// TLS session if the connection has one and it is set up; nothing during a handshake.
    static func sendOnce(_ connection: Connection, _ bytes: [UInt8]) {
        guard let ssl = connection.tls else {
            _ = bytes.withUnsafeBytes { send(connection.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            return
        }
        guard SSL_is_init_finished(ssl) == 1 else { return }
        ERR_clear_error()
        _ = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
    }

    /// A plain HTTP client that came to the TLS port is told so, in plain HTTP, like nginx
    /// does: what it sent is read first (so closing does not reset the answer away), within
    /// the head's bound and without waiting.
    func refusePlainHTTP(_ connection: Connection) {
        var scratch = [UInt8](repeating: 0, count: 4096)
        var drained = 0
        while drained < limits.maxHeadBytes {
            let count = scratch.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count > 0 else { break }
            drained += count
        }
        let response = Response(status: 400, body: "this port speaks HTTPS: use an https:// address\n")
        for piece in Self.encode(response) {
            _ = piece.withUnsafeBytes { send(connection.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        }
        shutdown(connection.fd, Int32(SHUT_WR))
    }

    /// What a TLS read or write that moved no byte means.
    private static func failure(_ ssl: OpaquePointer, _ result: Int32) -> Transfer {
        let error = SSL_get_error(ssl, result)
        switch error {
        case SSL_ERROR_WANT_READ: return .wait(Int16(POLLIN))
        case SSL_ERROR_WANT_WRITE: return .wait(Int16(POLLOUT))
        case SSL_ERROR_SSL where SSL_is_init_finished(ssl) == 0:
            let plainHTTP = feedsync_ssl_error_is_http_request(ERR_peek_error()) == 1
            ERR_clear_error()
            return .handshakeFailed(plainHTTP: plainHTTP)
        default:
            let handshaking = SSL_is_init_finished(ssl) == 0
            ERR_clear_error()
            return handshaking && error != SSL_ERROR_ZERO_RETURN && error != SSL_ERROR_SYSCALL ? .handshakeFailed(plainHTTP: false) : .closed
        }
    }
}
