@testable import App
import Foundation
import ProcessTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The listener serving HTTPS (``TLSContext``) with certificates made by `openssl` at test time,
/// driven by curl: answers whole (a large one too, through partial TLS writes), a plain HTTP
/// client told to use HTTPS, clients that never finish a handshake cut at the head deadline
/// while others are served, and certificate files that cannot serve refused in one sentence.
@Suite struct HTTPListenerTLSTests {
    /// 4 MiB: far more than the socket buffers hold, so the answer goes out in many TLS writes.
    static let bigBody = [[UInt8]](repeating: [UInt8](repeating: 0x62, count: 64 * 1024), count: 64)

    /// Answering on the listener's thread: the test's curl and openssl calls block pool threads.
    static func makeListener(_ tls: TLSContext, _ limits: HTTPListener.Limits = .init()) throws -> HTTPListener {
        let answer: @Sendable (HTTPListener.Request) -> HTTPListener.Response = { request in
            request.path == "/big" ? .init(status: 200, pieces: bigBody) : .init(status: 200, body: "ok \(request.path)\n")
        }
        let listener = try HTTPListener(address: try ListenAddress("127.0.0.1:1").withPort(0), limits: limits, tls: tls, handler: answer)
        listener.start()
        return listener
    }

    /// curl's standard output and exit status.
    static func curl(_ arguments: [String]) throws -> (output: String, status: Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["curl", "-s", "--max-time", "120"] + arguments
        let stdout = makePipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try launch(process)
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        closeEnds(stdout)
        return (String(decoding: output, as: UTF8.self), process.terminationStatus)
    }

    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func aTLSClientIsAnsweredWholeAndAPlainHTTPOneIsToldToUseHTTPS() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let pair = try TestCertificate(in: folder, name: "server")
        let listener = try Self.makeListener(try TLSContext(.init(certificate: pair.certificate, key: pair.key)))
        defer { listener.stop() }
        let base = "https://127.0.0.1:\(listener.port)"

        let small = try Self.curl(["--cacert", pair.certificate, base + "/healthz"])
        #expect(small.status == 0 && small.output == "ok /healthz\n", "\(small)")
        let big = try Self.curl(["--cacert", pair.certificate, base + "/big"])
        #expect(big.status == 0 && big.output.utf8.count == 4 << 20 && big.output.utf8.allSatisfy { $0 == 0x62 })
        // Without the certificate to trust, curl refuses the server: it is not plain text.
        #expect(try Self.curl([base + "/healthz"]).status != 0)

        let plain = try Self.curl(["-i", "http://127.0.0.1:\(listener.port)/healthz"])
        #expect(plain.output.hasPrefix("HTTP/1.1 400") && plain.output.contains("this port speaks HTTPS"), "\(plain)")
        #expect(try await HTTPListenerLimitTests.counts(of: listener) { $0.open == 0 && $0.handshakeFailures == 2 && $0.answered == 2 },
                "\(listener.counts)")
    }

    @Test(arguments: [0, 3])
    func clientsThatNeverFinishTheHandshakeAreCutAtTheHeadDeadlineAndHoldNoSlot(_ helloBytes: Int) async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let pair = try TestCertificate(in: folder, name: "server")
        // curl's own handshake must end inside the same deadline: at 500 ms, a loaded machine's
        // `make test` once let it run out (curl said 35, the connection cut mid-handshake).
        let limits = HTTPListener.Limits(maxConnections: 4, headTimeout: .seconds(5))
        let listener = try Self.makeListener(try TLSContext(.init(certificate: pair.certificate, key: pair.key)), limits)
        defer { listener.stop() }
        // Every slot held by a client that connects and sends nothing, or the start of a TLS record.
        let start: [UInt8] = [0x16, 0x03, 0x01]
        let silent = try (0..<4).map { _ in
            let fd = try connectTo(listener.port)
            _ = start.prefix(helloBytes).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            return fd
        }
        defer { silent.forEach { close($0) } }
        #expect(try await HTTPListenerLimitTests.counts(of: listener) { $0.accepted == 4 })

        let served = try Self.curl(["--cacert", pair.certificate, "https://127.0.0.1:\(listener.port)/healthz"])
        #expect(served.status == 0 && served.output == "ok /healthz\n", "\(served)")
        for fd in silent { #expect(HTTPListenerLimitTests.isEnded(fd)) }
        // Each silent client was cut at the head deadline, or made room for curl: none holds a slot.
        #expect(try await HTTPListenerLimitTests.counts(of: listener) { $0.open == 0 && $0.answered == 1 }, "\(listener.counts)")
        let counts = listener.counts
        #expect(counts.handshakeTimeouts + counts.evicted == 4 && counts.headTimeouts == 0, "\(counts)")
    }

    @Test func certificateFilesThatCannotServeAreRefusedInOneSentenceAndAReloadKeepsThePairInUse() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try TestCertificate(in: folder, name: "first")
        let second = try TestCertificate(in: folder, name: "second")
        let missing = folder.appendingPathComponent("missing.pem").path
        let cases: [(TLSContext.Files, String, String)] = [
            (.init(certificate: missing, key: first.key), "certificate", "does not exist"),
            (.init(certificate: first.certificate, key: missing), "key", "does not exist"),
            (.init(certificate: first.key, key: first.key), "certificate", "no usable PEM certificate"),
            (.init(certificate: first.certificate, key: first.certificate), "key", "no usable PEM private key"),
            (.init(certificate: first.certificate, key: second.key), "key", "does not match the certificate"),
        ]
        for (files, key, says) in cases {
            #expect { try TLSContext(files) } throws: { error in
                let error = error as? TLSError
                return error?.key == key && error?.description.contains(says) == true && error?.description.contains("\n") == false
            }
        }
        // A key that asks for a passphrase is refused, never prompted for.
        let locked = folder.appendingPathComponent("locked.key.pem").path
        try TestCertificate.openssl(["pkey", "-in", first.key, "-out", locked, "-aes256", "-passout", "pass:secret"])
        #expect(throws: TLSError.self) { try TLSContext(.init(certificate: first.certificate, key: locked)) }

        let context = try TLSContext(.init(certificate: first.certificate, key: first.key))
        #expect(throws: TLSError.self) { try context.reload(.init(certificate: second.certificate, key: first.key)) }
        #expect(context.files.certificate == first.certificate, "a failed reload keeps the pair in use")
        try context.reload(.init(certificate: second.certificate, key: second.key))
        #expect(context.files.certificate == second.certificate)

        #expect(TLSContext.warnings(context.files, keyPath: "serve.tls").isEmpty, "mode 0600")
        _ = chmod(second.key, 0o644)
        let warnings = TLSContext.warnings(context.files, keyPath: "serve.tls")
        #expect(warnings.count == 1 && warnings[0].contains("serve.tls.key") && warnings[0].contains("mode 644"), "\(warnings)")
    }
}
