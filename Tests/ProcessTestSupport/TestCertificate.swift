import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A self-signed certificate for `127.0.0.1` and its key, made by the `openssl` command line
/// into a test's folder (P-256, a day's validity): real PEM files for a real TLS listener.
public struct TestCertificate: Sendable {
    public let certificate: String
    public let key: String
    /// The certificate's serial number as `openssl x509 -serial` prints it (`serial=…`).
    public let serial: String

    /// Makes `<name>.cert.pem` and `<name>.key.pem` (mode 0600) in `folder`.
    public init(in folder: URL, name: String) throws {
        certificate = folder.appendingPathComponent("\(name).cert.pem").path
        key = folder.appendingPathComponent("\(name).key.pem").path
        _ = try Self.openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                              "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=127.0.0.1",
                              "-addext", "subjectAltName=IP:127.0.0.1"])
        _ = chmod(key, 0o600)
        serial = try Self.openssl(["x509", "-noout", "-serial", "-in", certificate]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The serial of the certificate a TLS server on `port` of 127.0.0.1 presents, as
    /// `openssl x509 -serial` prints it, through `openssl s_client`.
    public static func servedSerial(port: UInt16) throws -> String {
        let pem = try openssl(["s_client", "-connect", "127.0.0.1:\(port)", "-servername", "localhost"], input: "")
        return try openssl(["x509", "-noout", "-serial"], input: pem).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs `openssl` with `arguments`, `input` on its standard input; its standard output.
    @discardableResult
    public static func openssl(_ arguments: [String], input: String = "") throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        let (stdin, stdout) = (makePipe(), makePipe())
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try launch(process)
        try stdin.fileHandleForWriting.write(contentsOf: Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        closeEnds(stdin, stdout)
        guard process.terminationStatus == 0 else { throw TestCertificateError(arguments: arguments, status: process.terminationStatus) }
        return String(decoding: output, as: UTF8.self)
    }
}

/// `openssl` failed (is it installed? `.ci/deps test` installs it).
public struct TestCertificateError: Error, CustomStringConvertible {
    public let arguments: [String]
    public let status: Int32
    public var description: String { "openssl \(arguments.joined(separator: " ")) exited \(status)" }
}
