import Foundation
import ProcessTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The reader listener serving HTTPS itself (`"serve": {"tls": …}`) in a real `feedsyncd`, with
/// certificates the `openssl` command line makes in the test's folder: a reader app signs in
/// and reads a stream through curl trusting that certificate, a SIGHUP puts a renewed
/// certificate in front of new connections (and a broken pair keeps the old one), and files
/// that cannot serve stop it at start with exit 78.
@Suite(.endToEnd, .serialized) struct ReaderTLSEndToEndTests {
    /// A synced store, the account `ada`, and the listener on a free port serving `pair`.
    static func start(_ scratch: Scratch, server: ReferenceServer, pair: TestCertificate) async throws -> (DaemonProcess, UInt16, String) {
        let port = try MetricsEndToEndTests.freePort()
        let config = try scratch.writeConfig(baseURL: server.baseURL, interval: "1h")
        var json = try String(contentsOfFile: config, encoding: .utf8)
        json = String(json.dropLast()) + #", "serve": {"listen": "127.0.0.1:\#(port)", "tls": {"certificate": "\#(pair.certificate)", "key": "\#(pair.key)"}}}"#
        try Data(json.utf8).write(to: URL(fileURLWithPath: config))
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        #expect(try await feedsync(["serve-user", "add", "ada", "--config", config], input: "correct horse battery\n").status == 0)
        let daemon = try DaemonProcess(config: config, in: scratch)
        let base = "https://127.0.0.1:\(port)"
        #expect(try await eventually { try await ReaderListenerEndToEndTests.curl(["--cacert", pair.certificate, base + "/reader/api/0/user-info"]).status == 401 },
                "\(daemon.log)")
        return (daemon, UInt16(port), base)
    }

    @Test func aReaderAppSignsInAndReadsAStreamOverTLSAndPlainHTTPIsRefused() async throws {
        let server = try ReferenceServer(posts: 5)
        let scratch = try Scratch()
        let pair = try TestCertificate(in: scratch.folder, name: "server")
        let (daemon, port, base) = try await Self.start(scratch, server: server, pair: pair)
        defer { daemon.signal(SIGKILL) }
        let trust = ["--cacert", pair.certificate]

        let login = try await ReaderListenerEndToEndTests.curl(trust + ["--data-urlencode", "Email=ada", "--data-urlencode", "Passwd=correct horse battery",
                                                                        base + "/accounts/ClientLogin"])
        #expect(login.status == 200, "\(login.body)")
        let auth = try #require(login.body.split(separator: "\n").first { $0.hasPrefix("Auth=") }.map { String($0.dropFirst(5)) })
        let header = ["-H", "Authorization: GoogleLogin auth=\(auth)"]
        let ids = try await ReaderListenerEndToEndTests.curl(trust + header + [base + "/reader/api/0/stream/items/ids?s=user/-/state/com.google/reading-list&n=3"])
        let refs = (try JSONSerialization.jsonObject(with: Data(ids.body.utf8)) as? [String: Any])?["itemRefs"] as? [[String: Any]]
        #expect(ids.status == 200 && refs?.count == 3, "\(ids.body)")
        let contents = try await ReaderListenerEndToEndTests.curl(trust + header + [base + "/reader/api/0/stream/contents/feed/home?n=10"])
        let items = (try JSONSerialization.jsonObject(with: Data(contents.body.utf8)) as? [String: Any])?["items"] as? [[String: Any]]
        #expect(contents.status == 200 && items?.count == 5, "\(contents.body)")

        // Plain HTTP to the TLS port: told, in plain HTTP, to use HTTPS; nothing served.
        let plain = try await ReaderListenerEndToEndTests.curl(["http://127.0.0.1:\(port)/reader/api/0/user-info"])
        #expect(plain.status == 400 && plain.body.contains("this port speaks HTTPS"), "\(plain)")
        // A TLS client that trusts another certificate is refused by curl itself.
        let other = try TestCertificate(in: scratch.folder, name: "other")
        #expect(try await run(URL(fileURLWithPath: "/usr/bin/env"), ["curl", "-s", "--cacert", other.certificate, base + "/healthz"]).status != 0)
        // And the listener still serves.
        #expect(try await ReaderListenerEndToEndTests.curl(trust + header + [base + "/reader/api/0/user-info"]).status == 200)
        #expect(!daemon.log.contains(auth), "no token in the log")
    }

    @Test func aSIGHUPServesARenewedCertificateToNewConnectionsAndABrokenPairKeepsTheOld() async throws {
        let server = try ReferenceServer(posts: 1)
        let scratch = try Scratch()
        let pair = try TestCertificate(in: scratch.folder, name: "server")
        let (daemon, port, base) = try await Self.start(scratch, server: server, pair: pair)
        defer { daemon.signal(SIGKILL) }
        #expect(try TestCertificate.servedSerial(port: port) == pair.serial)

        // Renewed in place, as certbot does: new files at the same paths.
        let renewed = try TestCertificate(in: scratch.folder, name: "renewed")
        try FileManager.default.removeItem(atPath: pair.certificate)
        try FileManager.default.removeItem(atPath: pair.key)
        try FileManager.default.copyItem(atPath: renewed.certificate, toPath: pair.certificate)
        try FileManager.default.copyItem(atPath: renewed.key, toPath: pair.key)
        #expect(renewed.serial != pair.serial)
        daemon.signal(SIGHUP)
        #expect(try await eventually { try TestCertificate.servedSerial(port: port) == renewed.serial }, "\(daemon.log)")
        #expect(daemon.log.contains("tls_reloaded"))
        #expect(try await ReaderListenerEndToEndTests.curl(["--cacert", renewed.certificate, base + "/reader/api/0/user-info"]).status == 401)

        // A certificate whose key is not beside it: one line in the log, the renewed pair kept.
        let stray = try TestCertificate(in: scratch.folder, name: "stray")
        try FileManager.default.removeItem(atPath: pair.certificate)
        try FileManager.default.copyItem(atPath: stray.certificate, toPath: pair.certificate)
        daemon.signal(SIGHUP)
        #expect(try await eventually { daemon.log.contains("tls_reload_failed") }, "\(daemon.log)")
        let failures = daemon.log.split(separator: "\n").filter { $0.contains("tls_reload_failed") }
        #expect(failures.count == 1 && failures[0].contains("serve.tls.key") && failures[0].contains("does not match"), "\(failures)")
        #expect(try TestCertificate.servedSerial(port: port) == renewed.serial)
    }

    @Test func certificateFilesThatCannotServeStopTheDaemonAtStartWithExit78() async throws {
        let scratch = try Scratch()
        let pair = try TestCertificate(in: scratch.folder, name: "server")
        let stray = try TestCertificate(in: scratch.folder, name: "stray")
        let port = try MetricsEndToEndTests.freePort()
        let missing = scratch.folder.appendingPathComponent("missing.pem").path
        let cases = [
            (#"{"listen": "0.0.0.0:\#(port)", "tls": {"certificate": "\#(missing)", "key": "\#(pair.key)"}}"#, "serve.tls.certificate", "does not exist"),
            (#"{"listen": "0.0.0.0:\#(port)", "tls": {"certificate": "\#(pair.certificate)", "key": "\#(stray.key)"}}"#, "serve.tls.key", "does not match"),
            (#"{"listen": "0.0.0.0:\#(port)", "tls": {"certificate": "\#(pair.certificate)"}}"#, "serve.tls", "key"),
            (#"{"listen": "0.0.0.0:\#(port)"}"#, "serve.listen", "is not a loopback address"),
        ]
        for (serve, key, says) in cases {
            let config = try scratch.writeConfig(baseURL: "http://127.0.0.1:9")
            var json = try String(contentsOfFile: config, encoding: .utf8)
            json = String(json.dropLast()) + #", "serve": \#(serve)}"#
            try Data(json.utf8).write(to: URL(fileURLWithPath: config))
            let check = try await feedsync(["config", "check", "--config", config])
            #expect(check.status == 78 && check.stderr.contains(key) && check.stderr.contains(says), "\(check.stderr)")
            let daemon = try await run(binaries.appendingPathComponent("feedsyncd"), ["--config", config], environment: ["FEEDSYNC_PASSWORD": "demo"])
            #expect(daemon.status == 78 && daemon.stderr.contains(key) && daemon.stderr.contains(says), "\(daemon.stderr)")
        }
        // Any address with a good pair; a key file others may read is warned about.
        let config = try scratch.writeConfig(baseURL: "http://127.0.0.1:9")
        var json = try String(contentsOfFile: config, encoding: .utf8)
        json = String(json.dropLast()) + #", "serve": {"listen": "0.0.0.0:\#(port)", "tls": {"certificate": "\#(pair.certificate)", "key": "\#(pair.key)"}}}"#
        try Data(json.utf8).write(to: URL(fileURLWithPath: config))
        let check = try await feedsync(["config", "check", "--config", config])
        #expect(check.status == 0 && !check.stderr.contains("warning"), "\(check.stderr)")
        _ = chmod(pair.key, 0o640)
        let loose = try await feedsync(["config", "check", "--config", config])
        #expect(loose.status == 0 && loose.stderr.contains("serve.tls.key") && loose.stderr.contains("chmod 600"), "\(loose.stderr)")
    }
}
