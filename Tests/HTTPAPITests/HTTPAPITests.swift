import Core
import Foundation
@testable import HTTPAPI
import IntegrationKit
import ProcessTestSupport
import Synchronization
import Testing

/// Records every request and answers from a script, in order.
final class ScriptedTransport: HTTPTransport {
    private let script: Mutex<[HTTPResponse]>
    let requests = Mutex<[HTTPRequest]>([])

    init(_ responses: [HTTPResponse]) { script = Mutex(responses) }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        requests.withLock { $0.append(request) }
        let next = script.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        guard let next else { throw ServiceError(.unavailable, "sending", "the connection was refused") }
        return next
    }

    func close() async {}
    var sent: [HTTPRequest] { requests.withLock { $0 } }
}

func makeJSON(_ status: Int, _ body: String, headers: [String: String] = [:]) -> HTTPResponse {
    HTTPResponse(status: status, headers: headers.merging(["Content-Type": "application/json"]) { a, _ in a }, body: Data(body.utf8))
}

let validPost = #"{"id": "p1", "author": {"id": "u1", "handle": "ada", "display_name": "Ada", "avatar_url": "https://a.example/u1.png"}, "text": "hi", "created_at": "2026-01-01T00:00:37Z", "edited_at": "2026-01-02T00:00:00.500+01:00", "reply_to": "p0", "counts": {"replies": 1, "reposts": 2, "likes": 3}, "video_ids": ["vid-1"]}"#

func feedBody(_ changes: [String], next: String = "7", hasMore: Bool = false) -> String {
    #"{"changes": [\#(changes.joined(separator: ","))], "next_cursor": "\#(next)", "has_more": \#(hasMore)}"#
}

func makeService(_ transport: ScriptedTransport, pageSize: Int = 50) -> (HTTPAPIPostService, HTTPAPIAuthenticationService, RequestCounter) {
    let counter = RequestCounter()
    let client = HTTPAPIClient(transport: transport, baseURL: URL(string: "http://127.0.0.1:1")!, server: "http://127.0.0.1:1",
                               requests: counter, gate: HostGate())
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    return (HTTPAPIPostService(client: client, pageSize: pageSize),
            HTTPAPIAuthenticationService(client: client, username: "demo", password: Secret("s3cret-pw"), now: { now }),
            counter)
}

let session = Session(accessToken: Secret("tok-1"))

@Suite struct HTTPAPIPostServiceTests {
    @Test func aPageMapsEveryFieldAndKeepsTheETagWithTheCursor() async throws {
        let transport = ScriptedTransport([makeJSON(200, feedBody([#"{"op": "upsert", "post": \#(validPost)}"#, #"{"op": "delete", "id": "p9", "deleted_at": "2026-01-01T00:00:00Z"}"#]), headers: ["ETag": "\"v7\""])])
        let (posts, _, counter) = makeService(transport)

        let page = try await posts.page(after: nil, session: session)

        let request = try #require(transport.sent.first)
        #expect(request.target == "/v1/feed?limit=50")
        #expect(request.headers["Authorization"] == "Bearer tok-1")
        #expect(page.nextCursor == FeedCursor(position: "7", validator: "\"v7\""))
        #expect(page.hasMore == false && page.skipped.isEmpty && counter.value == 1)
        guard case .upsert(let post) = page.changes.first, case .delete(let deleted) = page.changes.last else {
            Issue.record("expected an upsert then a delete, got \(page.changes)")
            return
        }
        #expect(deleted == "p9")
        #expect(post.id == "p1" && post.author.displayName == "Ada" && post.text == "hi" && post.replyTo == "p0")
        #expect(post.createdAt == Date(timeIntervalSince1970: 1_767_225_637))
        #expect(post.editedAt == Date(timeIntervalSince1970: 1_767_308_400.5))
        #expect(post.counts == Post.Counts(replies: 1, reposts: 2, likes: 3) && post.videoIDs == ["vid-1"])
    }

    @Test func theNextPollSendsTheCursorAndValidatorAndA304IsAnEmptyPageInPlace() async throws {
        let transport = ScriptedTransport([HTTPResponse(status: 304)])
        let (posts, _, _) = makeService(transport)
        let cursor = FeedCursor(position: "7", validator: "\"v7\"")

        let page = try await posts.page(after: cursor, session: session)

        #expect(transport.sent.first?.target == "/v1/feed?cursor=7&limit=50")
        #expect(transport.sent.first?.headers["If-None-Match"] == "\"v7\"")
        #expect(page.changes.isEmpty && page.nextCursor == cursor && !page.hasMore)
    }

    @Test func aPageNestedDeeperThanTheReaderGoesIsTooDeepNotBrokenSoItIsNotRetried() async throws {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        let item = #"{"op": "upsert", "extra": \#(deep), "post": \#(validPost)}"#
        let (posts, _, _) = makeService(ScriptedTransport([makeJSON(200, feedBody([item]))]))

        let error = await #expect(throws: ServiceError.self) { try await posts.page(after: nil, session: session) }

        // The sync retries .invalidResponse; a contract violation it reports at once.
        #expect(error?.code == .contractViolation)
        #expect(error?.reason.contains("nests values more than 512 deep") == true)
    }

    @Test(arguments: [
        (#"{"op": "upsert", "post": {"author": {"id": "u1", "handle": "a"}, "text": "", "created_at": "2026-01-01T00:00:00Z"}}"#, nil as String?, "post.id is missing"),
        (#"{"op": "upsert", "post": \#(validPost.replacingOccurrences(of: "2026-01-01T00:00:37Z", with: "yesterday"))}"#, "p1", "created_at \"yesterday\" is not an RFC 3339 time"),
        (#"{"op": "upsert", "post": \#(validPost.replacingOccurrences(of: "https://a.example/u1.png", with: "ftp://x"))}"#, "p1", "avatar_url \"ftp://x\" is not an http(s) URL"),
        (#"{"op": "rename", "id": "p5"}"#, "p5", "unknown op \"rename\""),
        (#"{"op": "upsert", "post": \#(validPost.replacingOccurrences(of: "\"likes\": 3", with: "\"likes\": -3"))}"#, "p1", "a count is negative"),
        (#""just a string""#, nil, "the change is not of the expected type"),
    ])
    func aBadItemIsSkippedWithItsIdAndReasonAndTheRestOfThePageStands(item: String, id: String?, reason: String) async throws {
        let transport = ScriptedTransport([makeJSON(200, feedBody([item, #"{"op": "upsert", "post": \#(validPost)}"#]))])
        let (posts, _, _) = makeService(transport)

        let page = try await posts.page(after: nil, session: session)

        #expect(page.changes.count == 1)
        #expect(page.skipped == [SkippedItem(id: id, reason: reason, postID: id.map { PostID($0) })])
    }

    @Test(arguments: ["not json", #"{"changes": []}"#, #"{"changes": [], "next_cursor": "", "has_more": false}"#, ""])
    func aBodyThatIsNotAPageIsAnInvalidResponse(body: String) async throws {
        let (posts, _, _) = makeService(ScriptedTransport([makeJSON(200, body)]))
        let error = await #expect(throws: ServiceError.self) { try await posts.page(after: nil, session: session) }
        #expect(error?.code == .invalidResponse)
    }

    @Test func statusesMapToCoreErrors() async throws {
        let cases: [(HTTPResponse, ServiceError.Code)] = [
            (makeJSON(401, #"{"error": {"code": "token_expired", "message": "expired"}}"#), .unauthorized),
            (makeJSON(400, #"{"error": {"code": "bad_cursor", "message": "no"}}"#), .invalidRequest),
            (HTTPResponse(status: 502, body: Data("<html>bad gateway</html>".utf8)), .unavailable),
            (makeJSON(404, "{}"), .unavailable),
        ]
        for (response, code) in cases {
            let (posts, _, _) = makeService(ScriptedTransport([response]))
            let error = await #expect(throws: ServiceError.self) { try await posts.page(after: nil, session: session) }
            #expect(error?.code == code)
        }
        let (posts, _, _) = makeService(ScriptedTransport([makeJSON(429, "{}", headers: ["Retry-After": "30"])]))
        let before = Date()
        let error = await #expect(throws: ServiceError.self) { try await posts.page(after: nil, session: session) }
        let after = Date()
        guard case .rateLimited(let until)? = error?.code, let until else {
            Issue.record("expected a rate limit with a time, got \(String(describing: error))")
            return
        }
        // 30 s from when the answer was read, which was between `before` and `after`.
        #expect(until >= before.addingTimeInterval(30) && until <= after.addingTimeInterval(30), "\(before) \(until) \(after)")
    }

    @Test func retryAfterAcceptsAnHTTPDate() {
        let now = Date(timeIntervalSince1970: 1_792_567_600)
        let response = HTTPResponse(status: 429, headers: ["Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT"])
        #expect(RateLimitPacer.retryDate(for: response, now: now) == Date(timeIntervalSince1970: 1_792_567_680))
    }

    @Test func aRedirectThatReachesTheClientIsAContractViolationNamingItsTarget() async throws {
        let (posts, _, _) = makeService(ScriptedTransport([HTTPResponse(status: 301, headers: ["Location": "http://other.example/\u{1B}[2J"])]))
        let error = await #expect(throws: ServiceError.self) { try await posts.page(after: nil, session: session) }
        #expect(error?.code == .contractViolation)
        #expect(error?.reason.contains("http://other.example/") == true && error?.reason.contains("\u{1B}") == false)
    }

    @Test func aTransportFailureIsUnavailableAndNamesTheServer() async throws {
        let (posts, _, _) = makeService(ScriptedTransport([]))
        let error = await #expect(throws: ServiceError.self) { try await posts.page(after: nil, session: session) }
        #expect(error?.code == .unavailable)
        #expect(error?.description.contains("http://127.0.0.1:1") == true)
    }
}

@Suite struct HTTPAPIAuthenticationTests {
    @Test func loginSendsTheCredentialsAndMapsTheTokens() async throws {
        let transport = ScriptedTransport([makeJSON(200, #"{"access_token": "A", "refresh_token": "R", "token_type": "Bearer", "expires_in": 900}"#)])
        let (_, auth, _) = makeService(transport)

        let session = try await auth.logIn()

        let request = try #require(transport.sent.first)
        #expect(request.method == "POST" && request.url.path == "/v1/auth/login")
        let body = try JSONDecoder().decode([String: String].self, from: request.body ?? Data())
        #expect(body == ["username": "demo", "password": "s3cret-pw"])
        #expect(session.accessToken.revealed == "A" && session.refreshToken?.revealed == "R")
        #expect(session.expiresAt == Date(timeIntervalSince1970: 1_800_000_900))
    }

    @Test func aTokenThatCouldSplitAHeaderIsRefusedAtLoginAndRefresh() async throws {
        for body in [#"{"access_token": "A\r\nX-Injected: 1", "refresh_token": "R"}"#, #"{"access_token": "A", "refresh_token": "R\nX: 1"}"#,
                     #"{"access_token": "A B", "refresh_token": "R"}"#, #"{"access_token": "caf\u00e9", "refresh_token": "R"}"#] {
            let (_, auth, _) = makeService(ScriptedTransport([makeJSON(200, body), makeJSON(200, body)]))
            let login = await #expect(throws: ServiceError.self, "\(body)") { try await auth.logIn() }
            #expect(login?.code == .contractViolation && login?.reason.hasSuffix("it is neither sent nor stored") == true)
            await #expect(throws: ServiceError.self) { try await auth.refresh(Session(accessToken: Secret("A"), refreshToken: Secret("R"))) }
        }
    }

    @Test func anETagThatCouldSplitAHeaderIsNeitherStoredNorSent() async throws {
        let body = feedBody([#"{"op": "upsert", "post": \#(validPost)}"#])
        let (posts, _, _) = makeService(ScriptedTransport([makeJSON(200, body, headers: ["ETag": "\"v7\"\r\nX-Injected: 1"])]))
        let error = await #expect(throws: ServiceError.self) { try await posts.page(after: nil, session: session) }
        #expect(error?.code == .contractViolation && error?.reason.contains("the ETag holds byte 0xD") == true)
    }

    @Test func aCursorGoesIntoTheQueryPercentEncoded() async throws {
        let transport = ScriptedTransport([makeJSON(200, feedBody([]))])
        let (posts, _, _) = makeService(transport)
        _ = try await posts.page(after: FeedCursor(position: "a b&c=d#e\r\nX: 1"), session: session)
        #expect(transport.sent.first?.url.query(percentEncoded: true) == "cursor=a%20b%26c%3Dd%23e%0D%0AX:%201&limit=50")
    }

    @Test func refreshSendsTheRefreshToken() async throws {
        let transport = ScriptedTransport([makeJSON(200, #"{"access_token": "B", "refresh_token": "R2", "expires_in": 60}"#)])
        let (_, auth, _) = makeService(transport)

        let session = try await auth.refresh(Session(accessToken: Secret("A"), refreshToken: Secret("R")))

        #expect(transport.sent.first?.url.path == "/v1/auth/refresh")
        #expect(try JSONDecoder().decode([String: String].self, from: transport.sent.first?.body ?? Data()) == ["refresh_token": "R"])
        #expect(session.accessToken.revealed == "B")
    }

    @Test func rejectedCredentialsAreUnauthorizedAndNoSecretIsInTheMessage() async throws {
        let (_, auth, _) = makeService(ScriptedTransport([makeJSON(401, #"{"error": {"code": "invalid_credentials", "message": "wrong password"}}"#)]))

        let error = await #expect(throws: ServiceError.self) { try await auth.logIn() }

        #expect(error?.code == .unauthorized)
        #expect(error?.description.contains("s3cret-pw") == false)
        #expect(error?.description.contains("invalid_credentials") == true)
    }
}

@Suite struct FixtureTransportTests {
    @Test func replaysRecordedResponsesAndAnswers304ToAMatchingValidator() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fixture-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(#"{"responses": [{"request": "GET /v1/feed?cursor=3&limit=2", "status": 200, "headers": {"ETag": "\"v3\""}, "body": "p.json"}]}"#.utf8)
            .write(to: folder.appendingPathComponent("index.json"))
        try Data(feedBody([], next: "3").utf8).write(to: folder.appendingPathComponent("p.json"))
        let transport = try FixtureTransport(directory: folder)

        let request = HTTPRequest(url: URL(string: "http://fixture.invalid/v1/feed?cursor=3&limit=2")!)
        #expect(try await transport.send(request).status == 200)
        var conditional = request
        conditional.headers["If-None-Match"] = "\"v3\""
        #expect(try await transport.send(conditional).status == 304)
        #expect(try await transport.send(HTTPRequest(url: URL(string: "http://fixture.invalid/v1/other")!)).status == 404)
    }

    @Test func aMissingIndexIsReportedWithItsPath() {
        #expect(throws: FixtureTransport.FixtureError.self) { try FixtureTransport(directory: URL(fileURLWithPath: "/nonexistent")) }
    }
}

@Suite struct HTTPAPIConfigTests {
    func makeSection(_ json: String) throws -> ConfigSection {
        guard case .object(let object) = try JSONDecoder().decode(ConfigValue.self, from: Data(json.utf8)) else { throw CancellationError() }
        return ConfigSection(object, path: "feeds[0].posts",
                             context: ConfigContext(fileName: "f.json", directory: URL(fileURLWithPath: "/"), environment: ["PW": "x"]))
    }

    func build(_ baseURL: String, extra: String = "") throws -> FeedBackend {
        try HTTPAPIIntegration.makeBackend(
            makeSection(#"{"integration": "httpapi", "baseURL": "\#(baseURL)", "username": "u", "passwordEnv": "PW"\#(extra)}"#),
            context: IntegrationContext())
    }

    @Test func plainHTTPToAHostThatIsNotLoopbackIsRefused() throws {
        #expect(throws: ConfigError.self) { try build("http://feed.example.com") }
        #expect(throws: ConfigError.self) { try build("http://10.0.0.5:8080") }
        do { _ = try build("http://feed.example.com") } catch {
            #expect("\(error)".contains("feeds[0].posts.baseURL: \"http://feed.example.com\" is plain http"))
        }
    }

    @Test func httpsLoopbackAndAnExplicitOptInAreAccepted() throws {
        _ = try build("https://feed.example.com")
        _ = try build("http://127.0.0.1:8080")
        _ = try build("http://localhost:8080")
        _ = try build("http://[::1]:8080")
        _ = try build("http://feed.example.com", extra: #", "allowInsecureHTTP": true"#)
    }

    @Test(arguments: [("127.0.0.1", true), ("127.10.20.30", true), ("localhost", true), ("::1", true), ("[::1]", true),
                      ("127.0.0.1.example.com", false), ("128.0.0.1", false), ("example.com", false), ("1270.0.0.1", false)])
    func loopbackHostsAreRecognised(host: String, loopback: Bool) {
        #expect(ConfigSection.isLoopback(host) == loopback)
    }
}

@Suite struct JSONReaderTests {
    func read<T>(_ json: String, _ body: (inout JSONReader) throws -> T) throws -> T {
        var bytes = Array(json.utf8)
        return try bytes.withUnsafeMutableBufferPointer { buffer in
            var reader = JSONReader(UnsafeBufferPointer(buffer))
            return try body(&reader)
        }
    }

    @Test func stringsDecodeEveryEscapeAndSurrogatePairs() throws {
        #expect(try read(#""a\"b\\c\/d\n\t\u00e9\ud83d\ude00 ☕""#) { try $0.string("s") } == "a\"b\\c/d\n\té😀 ☕")
        #expect(try read(#""plain""#) { try $0.string("s") } == "plain")
        #expect(try read(#""\ud800x""#) { try $0.string("s") } == "\u{FFFD}x", "a lone surrogate becomes U+FFFD")
    }

    @Test func randomStringsRoundTripWhetherEscapedMinimallyOrAsASCII() throws {
        var random = SeededRandom(state: 7)
        let alphabet: [Unicode.Scalar] = ["a", "Z", " ", "\"", "\\", "/", "\n", "\t", "\u{01}", "\u{1F}", "é", "ü", "東", "\u{FFFD}", "😀", "🚀"]
        for _ in 0..<500 {
            let length = Int(random.next() % 40)
            var text = String.UnicodeScalarView()
            for _ in 0..<length { text.append(alphabet[Int(random.next() % UInt64(alphabet.count))]) }
            let original = String(text)
            // JSONSerialization escapes only what it must; the ASCII form escapes everything else too.
            let minimal = String(decoding: try JSONSerialization.data(withJSONObject: [original], options: [.fragmentsAllowed]), as: UTF8.self)
            #expect(try read(minimal) { reader in try reader.optionalStrings("s") } == [original], "\(minimal)")
            var ascii = "\""
            for unit in original.utf16 {
                if unit >= 0x20 && unit < 0x7F && unit != 0x22 && unit != 0x5C { ascii.unicodeScalars.append(Unicode.Scalar(unit)!) }
                else { ascii += String(format: "\\u%04x", unit) }
            }
            ascii += "\""
            #expect(try read(ascii) { try $0.string("s") } == original, "\(ascii)")
        }
    }

    @Test(arguments: [#""\x""#, "\"a\u{01}b\"", #""unterminated"#, #""\u12""#, "tru", "-", "1.", "1e", "[1,]", #"{"a" 1}"#])
    func brokenJSONIsASyntaxError(json: String) {
        #expect(throws: JSONReader.SyntaxError.self) { try read(json) { try $0.skipValue() } }
    }

    @Test func wrongTypesAreFieldErrorsNamingThePathAndLeaveTheReaderAfterTheValue() throws {
        let result = try read(#"[{"x": [1, 2]}, 7]"#) { reader -> (String, Int?) in
            var reason = ""
            var last: Int?
            try reader.readArray { reader in
                do { _ = try reader.string("post.text") } catch let error as JSONReader.FieldError { reason = error.reason; return }
                last = try reader.optionalInt("n")
            }
            return (reason, last)
        }
        #expect(result.0 == "post.text is not a string")
        #expect(result.1 == nil, "the second element was read as a string attempt too")
        #expect(throws: JSONReader.FieldError.self) { try read("1.5") { try $0.optionalInt("n") } }
        // A string where a number belongs is one bad field, not an unreadable body.
        #expect(throws: JSONReader.FieldError.self) { try read(#""5""#) { try $0.optionalInt("n") } }
        #expect(throws: JSONReader.FieldError.self) { try read("{}") { try $0.optionalInt("n") } }
        #expect(throws: JSONReader.FieldError.self) { try read("99999999999999999999") { try $0.optionalInt("n") } }
        #expect(throws: JSONReader.FieldError.self) { try read("null") { try $0.string("s") } }
    }

    @Test func deepNestingIsRefusedRatherThanOverflowingTheStack() {
        #expect(throws: JSONReader.TooDeepError.self) {
            try read(String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)) { try $0.skipValue() }
        }
        #expect(throws: JSONReader.SyntaxError.self) { try read(String(repeating: "[", count: 100_000)) { try $0.skipValue() } }
    }
}
