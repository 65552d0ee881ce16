import Core
import Foundation
import Testing

@Suite struct ConfigSectionTests {
    func makeSection(_ json: String, environment: [String: String] = [:], path: String = "feeds[0].posts") throws -> ConfigSection {
        guard case .object(let object) = try JSONDecoder().decode(ConfigValue.self, from: Data(json.utf8)) else {
            throw ConfigError(file: "test", keyPath: "", message: "not an object")
        }
        let context = ConfigContext(fileName: "feedsync.json", directory: URL(fileURLWithPath: "/etc/feedsync"), environment: environment)
        return ConfigSection(object, path: path, context: context)
    }

    func message(_ body: () throws -> Void) -> String? {
        do { try body(); return nil } catch { return "\(error)" }
    }

    @Test func aBadURLIsNamedByFileKeyPathAndValue() throws {
        let section = try makeSection(#"{"baseURL": "htp://x"}"#)
        #expect(message { _ = try section.httpURL("baseURL") } == #"feedsync.json: feeds[0].posts.baseURL: "htp://x" is not an http(s) URL"#)
    }

    @Test func wrongTypesAndRangesSayWhatWasFound() throws {
        let section = try makeSection(#"{"pageSize": 0, "name": 42, "rate": "high", "on": "yes"}"#)
        #expect(message { _ = try section.int("pageSize", in: 1...1000) } == "feedsync.json: feeds[0].posts.pageSize: 0 is out of range (1 to 1000)")
        #expect(message { _ = try section.string("name") } == "feedsync.json: feeds[0].posts.name: expected a string, found 42")
        #expect(message { _ = try section.double("rate", in: 0...1) } == #"feedsync.json: feeds[0].posts.rate: expected a number, found "high""#)
        #expect(message { _ = try section.bool("on") } == #"feedsync.json: feeds[0].posts.on: expected true or false, found "yes""#)
    }

    @Test(arguments: [("90s", 90.0), ("5m", 300), ("1.5h", 5400), (" 2m ", 120)])
    func durationsAcceptSecondsMinutesAndHours(text: String, seconds: Double) throws {
        #expect(try makeSection(#"{"interval": "\#(text)"}"#).duration("interval", in: 10...86_400) == seconds)
    }

    @Test(arguments: [#""5""#, #""-5m""#, #""0s""#, "5", #""5 minutes""#, #""1e300h""#, #""9s""#, #""0.0001s""#, #""nan""#, #""infs""#])
    func impossibleOrUnreasonableDurationsAreRefused(json: String) throws {
        let section = try makeSection(#"{"interval": \#(json)}"#)
        #expect(throws: ConfigError.self) { try section.duration("interval", in: 10...(30 * 86_400)) }
    }

    @Test func durationBoundsAreNamedInTheMessage() throws {
        let section = try makeSection(#"{"interval": "1e300h", "heartbeat": "0.0001s"}"#)
        #expect(message { _ = try section.duration("interval", in: 10...(30 * 86_400)) }
                == #"feedsync.json: feeds[0].posts.interval: "1e300h" is longer than the maximum of 30 days"#)
        #expect(message { _ = try section.duration("heartbeat", in: 1...60) }
                == #"feedsync.json: feeds[0].posts.heartbeat: "0.0001s" is shorter than the minimum of 1s"#)
    }

    @Test func anUnknownKeySuggestsTheNearestValidOne() throws {
        let section = try makeSection(#"{"baseUrl": "http://x", "username": "u"}"#)
        _ = try section.httpURL("baseURL")
        _ = try section.string("username")
        #expect(message { try section.finish() } == #"feedsync.json: feeds[0].posts.baseUrl: unknown key; did you mean "baseURL"?"#)
    }

    @Test func aSecretComesFromTheNamedEnvironmentVariable() throws {
        let section = try makeSection(#"{"passwordEnv": "PW"}"#, environment: ["PW": "hunter2"])
        #expect(try section.secret("password").revealed == "hunter2")
    }

    @Test func missingOrInlineSecretsAreRefusedWithoutEchoingThem() throws {
        #expect(message { _ = try makeSection(#"{"passwordEnv": "PW"}"#).secret("password") }
                == "feedsync.json: feeds[0].posts.passwordEnv: environment variable PW is not set or empty")
        #expect(message { _ = try makeSection(#"{"passwordEnv": "PW"}"#, environment: ["PW": ""]).secret("password") }?.contains("not set or empty") == true)
        let inline = message { _ = try makeSection(#"{"password": "hunter2"}"#).secret("password") }
        #expect(inline?.contains("not read from the config file") == true)
        #expect(inline?.contains("hunter2") == false)
        #expect(message { _ = try makeSection("{}").secret("password") }?.contains("needs \"passwordEnv\"") == true)
    }

    @Test func aSecretFileIsResolvedAgainstTheConfigFolderAndTrimmed() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cfg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("hunter2\n".utf8).write(to: folder.appendingPathComponent("pw.txt"))
        guard case .object(let object) = try JSONDecoder().decode(ConfigValue.self, from: Data(#"{"passwordFile": "pw.txt"}"#.utf8)) else { return }
        let section = ConfigSection(object, path: "x", context: ConfigContext(fileName: "f", directory: folder, environment: [:]))
        #expect(try section.secret("password").revealed == "hunter2")
    }
}

@Suite struct SecretTests {
    @Test func aSecretNeverShowsItsText() {
        let session = Session(accessToken: Secret("tok-abc"), refreshToken: Secret("ref-xyz"), expiresAt: nil)
        var dumped = ""
        dump(session, to: &dumped)
        for text in ["\(session)", String(describing: session), String(reflecting: session), dumped, "\(session.accessToken)"] {
            #expect(!text.contains("tok-abc") && !text.contains("ref-xyz"), "leaked in \(text)")
        }
        #expect(session.accessToken.revealed == "tok-abc")
    }
}

@Suite struct SecretFileModeTests {
    @Test func aSecretFileOthersCanReadIsUsedWithAWarning() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cfg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("pw.txt")
        try Data("hunter2\n".utf8).write(to: file)
        guard case .object(let object) = try JSONDecoder().decode(ConfigValue.self, from: Data(#"{"passwordFile": "pw.txt"}"#.utf8)) else { return }
        let context = ConfigContext(fileName: "f.json", directory: folder, environment: [:])

        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        _ = try ConfigSection(object, path: "x", context: context).secret("password")
        #expect(context.warnings.all.isEmpty)

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        #expect(try ConfigSection(object, path: "x", context: context).secret("password").revealed == "hunter2")
        #expect(context.warnings.all.count == 1)
        #expect(context.warnings.all.first?.contains("x.passwordFile: the secret file \(file.path) can be read by other users (mode 644)") == true)
        #expect(context.warnings.all.first?.contains("hunter2") == false)
    }
}
