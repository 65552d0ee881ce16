import CSSL
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The certificate and key a listener serves TLS with (`"serve": {"tls": …}`), loaded from PEM
/// files through OpenSSL's libssl: TLS 1.2 at least, the library's default ciphers, no
/// renegotiation, and a key that asks for a passphrase refused (never a prompt).
///
/// ``reload(_:)`` loads the files again (feedsyncd's SIGHUP, after a certificate is renewed):
/// connections accepted afterwards get the new pair, those open keep theirs, and a pair that
/// fails to load leaves the one in use.
///
///     let tls = try TLSContext(.init(certificate: "/etc/feedsync/cert.pem", key: "/etc/feedsync/key.pem"))
public final class TLSContext: Sendable {
    /// Where the certificate (a chain, leaf first) and its private key are, as PEM files.
    public struct Files: Sendable, Equatable {
        public var certificate: String
        public var key: String

        public init(certificate: String, key: String) {
            self.certificate = certificate
            self.key = key
        }
    }

    /// A set-up `SSL_CTX`. It is shared with the listener's thread: OpenSSL documents a
    /// context as safe to use from several threads once set up (we never change it after
    /// ``TLSContext/load(_:)``), and its lifetime is its reference count (each connection made
    /// from it holds one), which is why it may cross threads unchecked.
    struct Handle: @unchecked Sendable {
        let context: OpaquePointer
    }

    private let current: Mutex<(files: Files, handle: Handle)>

    /// Loads `files`.
    ///
    /// - Throws: ``TLSError`` in one sentence naming the key (`certificate` or `key`) and the
    ///   fix: a file missing or unreadable, not PEM, a key that does not match the certificate.
    public init(_ files: Files) throws(TLSError) {
        current = Mutex((files, try Self.load(files)))
    }

    deinit {
        SSL_CTX_free(current.withLock { $0.handle.context })
    }

    /// The files in use.
    public var files: Files { current.withLock { $0.files } }

    /// Loads `files` (by default the ones in use) again; the connections accepted afterwards
    /// get the new pair. On a failure the pair in use stays, and the error says why.
    public func reload(_ files: Files? = nil) throws(TLSError) {
        let files = files ?? self.files
        let handle = try Self.load(files)
        let old = current.withLock { state in
            defer { state = (files, handle) }
            return state.handle
        }
        // Connections made from the old context hold their own reference to it.
        SSL_CTX_free(old.context)
    }

    /// A server-side TLS connection over `fd`, its handshake left to the first read; `nil`
    /// when OpenSSL cannot make one (out of memory).
    func connection(over fd: Int32) -> OpaquePointer? {
        // A reference of our own, taken under the lock, so a reload meanwhile cannot free it.
        let handle = current.withLock { state in
            SSL_CTX_up_ref(state.handle.context)
            return state.handle
        }
        defer { SSL_CTX_free(handle.context) }
        guard let ssl = SSL_new(handle.context) else { return nil }
        guard SSL_set_fd(ssl, fd) == 1 else {
            SSL_free(ssl)
            return nil
        }
        SSL_set_accept_state(ssl)
        return ssl
    }

    /// What a careful operator is told about `files` without refusing them: a key file other
    /// users may read or change.
    public static func warnings(_ files: Files, keyPath: String) -> [String] {
        var status = stat()
        guard stat(files.key, &status) == 0, status.st_mode & 0o077 != 0 else { return [] }
        let mode = String(status.st_mode & 0o777, radix: 8)
        return ["\(keyPath).key: \(files.key) may be read by other users than its owner (mode \(mode)); chmod 600 it"]
    }

    static func load(_ files: Files) throws(TLSError) -> Handle {
        for (key, path) in [("certificate", files.certificate), ("key", files.key)] {
            guard access(path, F_OK) == 0 else { throw TLSError(key: key, "\(path) does not exist; give the PEM file's path") }
            guard access(path, R_OK) == 0 else {
                throw TLSError(key: key, "\(path) cannot be read (\(String(cString: strerror(errno)))); let the user feedsync runs as read it")
            }
        }
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw TLSError(key: "certificate", "OpenSSL could not set up TLS (\(lastError())); check the libssl installation")
        }
        guard feedsync_ssl_ctx_prepare(context) == 1 else {
            SSL_CTX_free(context)
            throw TLSError(key: "certificate", "OpenSSL refused TLS 1.2 as the minimum (\(lastError())); check the libssl installation")
        }
        guard SSL_CTX_use_certificate_chain_file(context, files.certificate) == 1 else {
            let reason = lastError()
            SSL_CTX_free(context)
            throw TLSError(key: "certificate", "\(files.certificate) holds no usable PEM certificate (\(reason)); give the certificate's PEM file")
        }
        guard SSL_CTX_use_PrivateKey_file(context, files.key, SSL_FILETYPE_PEM) == 1,
              SSL_CTX_check_private_key(context) == 1 else {
            let mismatch = feedsync_ssl_error_is_key_mismatch(ERR_peek_last_error()) == 1
            let reason = lastError()
            SSL_CTX_free(context)
            if mismatch {
                throw TLSError(key: "key", "\(files.key) does not match the certificate \(files.certificate); give the key the certificate was made for")
            }
            throw TLSError(key: "key", "\(files.key) holds no usable PEM private key (\(reason)); give the unencrypted key's PEM file")
        }
        return Handle(context: context)
    }

    /// OpenSSL's last error as text (its queue emptied), or `unknown error`.
    static func lastError() -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return "unknown error" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Why a certificate or key cannot serve, in one sentence; ``key`` names the config key
/// (`certificate` or `key`) under `serve.tls`.
public struct TLSError: Error, CustomStringConvertible {
    public var key: String
    public var description: String
    init(key: String, _ description: String) {
        self.key = key
        self.description = description
    }
}
