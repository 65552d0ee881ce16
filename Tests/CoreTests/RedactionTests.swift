import Core
import Foundation
import Testing

/// The one redaction: each form a server can repeat a secret in, pieces of one, and what
/// passes through it (errors, the logger, ``Terminal/safe(_:limit:)``).
///
/// The registry is the process's, shared with every other test running at the same time, so
/// each test makes secrets of its own that nothing else prints.
@Suite struct RedactionTests {
    /// A secret no other test holds: `prefix` and random letters and digits.
    func makeSecret(_ prefix: String = "tok", length: Int = 32) -> Secret {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        return Secret(prefix + String((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
    }

    /// Whether `text` still shows the secret, or any piece of 8 of its bytes, as it is.
    func shows(_ text: String, _ secret: Secret) -> Bool {
        let bytes = Array(secret.revealed.utf8)
        let haystack = Array(text.lowercased().utf8)
        return (0...(bytes.count - 8)).contains { start in
            let piece = Array(String(decoding: bytes[start..<start + 8], as: UTF8.self).lowercased().utf8)
            return haystack.indices.contains { haystack[$0...].starts(with: piece) }
        }
    }

    @Test func aSecretAsItIsInAnyCaseIsReplaced() {
        let secret = makeSecret()
        let plain = secret.revealed
        for text in ["rejected Bearer \(plain)", "\(plain)", "a\(plain)b", "Bearer \(plain.uppercased()) and \(plain.lowercased())",
                     "twice: \(plain) \(plain).", "\"\(plain)\""] {
            let redacted = Redaction.redact(text)
            #expect(!shows(redacted, secret), "\(text) → \(redacted)")
            #expect(redacted.contains(Redaction.marker), "\(text)")
        }
        #expect(Redaction.redact("rejected Bearer \(plain).") == "rejected Bearer [redacted].")
        withExtendedLifetime(secret) {}
    }

    /// An `Authorization` value held as a secret keeps its scheme public: another text's
    /// `Bearer tok…` loses only its own token, not the word (a whole-suite run once printed
    /// `rejected [redacted]` while another test held `Bearer tok…` as one secret).
    @Test func anAuthorizationValueRedactsItsCredentialsNotItsScheme() {
        let token = makeSecret()
        let basic = makeSecret("dXNlcjpw")
        let bearer = Secret(scheme: "Bearer", credentials: token)
        let basicValue = Secret(scheme: "Basic", credentials: basic)
        #expect(bearer.revealed == "Bearer \(token.revealed)" && basicValue.revealed == "Basic \(basic.revealed)")
        #expect(Redaction.redact("sent \(bearer.revealed) and \(basicValue.revealed)") == "sent Bearer [redacted] and Basic [redacted]")
        let other = makeSecret()
        #expect(Redaction.redact("rejected Bearer \(other.revealed).") == "rejected Bearer [redacted].")
        #expect(Redaction.redact("rejected Bearer tok, Basic dXNl.") == "rejected Bearer tok, Basic dXNl.",
                "a scheme and a short word are not secret")
        withExtendedLifetime((token, basic, bearer, basicValue, other)) {}
    }

    @Test func percentFormJSONAndHTMLEncodingsAreUndoneBeforeTheSearch() {
        let secret = Secret("p+ss/w=rd with space&more")
        let plain = secret.revealed
        let unreserved = CharacterSet.alphanumerics
        let percent = plain.addingPercentEncoding(withAllowedCharacters: unreserved)!
        let forms = [
            percent,                                                            // %2B %2F %3D %20 %26
            percent.lowercased(),                                               // %2b …, letters too
            plain.replacingOccurrences(of: " ", with: "+").replacingOccurrences(of: "&", with: "%26"),   // form encoding
            percent.addingPercentEncoding(withAllowedCharacters: unreserved)!,  // %252B: twice
            plain.unicodeScalars.map { String(format: "\\u%04x", $0.value) }.joined(),                     // JSON, every character
            plain.replacingOccurrences(of: "/", with: "\\/"),                   // JSON's escaped solidus
            plain.unicodeScalars.map { "&#\($0.value);" }.joined(),             // HTML decimal references
            plain.unicodeScalars.map { "&#x\(String($0.value, radix: 16));" }.joined(),
            plain.replacingOccurrences(of: "&", with: "&amp;"),
            plain.replacingOccurrences(of: "&", with: "&amp;").addingPercentEncoding(withAllowedCharacters: unreserved)!,  // HTML, then a URL
        ]
        for form in forms {
            let redacted = Redaction.redact("error: the password \(form) is wrong")
            #expect(redacted == "error: the password [redacted] is wrong", "\(form) → \(redacted)")
        }
        withExtendedLifetime(secret) {}
    }

    @Test func base64AtEveryOffsetAndInABasicCredentialIsFound() {
        let secret = makeSecret("pw-", length: 17)
        // Users whose own base64 has no `+` or `/`, so what is left of them is easy to count.
        for user in ["", "a", "ab", "abc", "demo", "feedsync"] {
            let basic = Data((user + ":" + secret.revealed).utf8).base64EncodedString()
            let before = (user.utf8.count + 1) / 3 * 4 + [0, 2, 3][(user.utf8.count + 1) % 3]
            for (prefix, run) in [("Authorization: Basic ", basic), ("creds=", basic.replacingOccurrences(of: "+", with: "%2B")),
                                  ("url-safe: ", basic.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_"))] {
                let redacted = Redaction.redact(prefix + run)
                let parts = redacted.components(separatedBy: Redaction.marker)
                // What is left: the user's own characters before, one mixed character and padding after.
                #expect(parts.count == 2 && parts[0].count <= prefix.count + before && parts[1].count <= 7, "\(user): \(run) → \(redacted)")
            }
        }
        let alone = Data(secret.revealed.utf8).base64EncodedString()
        #expect(Redaction.redact("token \(alone) refused").hasPrefix("token [redacted]"))
        withExtendedLifetime(secret) {}
    }

    @Test func piecesOfASecretCutShortOrSplitAreTakenOut() {
        let secret = makeSecret(length: 40)
        let plain = secret.revealed
        let half = plain.index(plain.startIndex, offsetBy: 21)
        for text in ["token \(plain.prefix(12))… rejected", "token …\(plain.suffix(9)) rejected",
                     "token \(plain[..<half])\n\(plain[half...]) rejected", "\(plain[..<half]) \(plain[half...])"] {
            let redacted = Redaction.redact(text)
            #expect(!shows(redacted, secret), "\(text) → \(redacted)")
        }
        // A piece shorter than the window is ordinary text.
        #expect(Redaction.redact("token \(plain.prefix(7))") == "token \(plain.prefix(7))")
        withExtendedLifetime(secret) {}
    }

    @Test func terminalSafeRedactsBeforeItCutsShort() {
        let secret = makeSecret(length: 40)
        let plain = secret.revealed
        for padding in [0, 1, 190, 195, 199, 200, 201] {
            let text = String(repeating: "x", count: padding) + plain + String(repeating: "y", count: 300)
            let shown = Terminal.safe(text, limit: 200)
            // The cut at 200 falls before, inside or after the secret: no piece of it is left.
            #expect(!shows(shown, secret), "padding \(padding): \(shown)")
            #expect(shown.hasSuffix("…"))
        }
        let percent = plain.map { "%" + String(format: "%02X", $0.asciiValue!) }.joined()
        #expect(Terminal.safe(String(repeating: "x", count: 195) + percent, limit: 200) == String(repeating: "x", count: 195) + "[reda…")
        withExtendedLifetime(secret) {}
    }

    @Test func shortSecretsAreNotRegisteredAndOrdinaryTextIsLeftAlone() {
        let short = Secret("demo123")
        #expect(Redaction.redact("feed demo123 at http://demo123.example") == "feed demo123 at http://demo123.example")
        let secret = makeSecret()
        for text in ["", "short", "a%2Bb&amp;c\\u0041 + d", "%", "\\", "&#;", "&#x110000;", "&#99999999999;", "\\uD800 alone", "%zz",
                     "naïve café — ünïcode ✓ 𝄞 text that is long enough"] {
            #expect(Redaction.redact(text) == text, "\(text)")
        }
        withExtendedLifetime((short, secret)) {}
    }

    @Test func aSecretOutsideASCIIIsReplacedWholeCharactersAtATime() {
        let secret = Secret("pässwörd-ünïcödé-€𝄞")
        let redacted = Redaction.redact("wrong: pässwörd-ünïcödé-€𝄞!")
        #expect(redacted == "wrong: [redacted]!")
        let escaped = secret.revealed.unicodeScalars.map { scalar -> String in
            scalar.value > 0xFFFF
                ? String(format: "\\u%04X\\u%04X", 0xD800 + (scalar.value - 0x10000) >> 10, 0xDC00 + (scalar.value - 0x10000) & 0x3FF)
                : String(format: "\\u%04X", scalar.value)
        }.joined()
        #expect(Redaction.redact("{\"error\": \"\(escaped)\"}") == "{\"error\": \"[redacted]\"}")
        withExtendedLifetime(secret) {}
    }

    @Test func aSecretLetGoIsRedactedUntilManyMoreAreLetGoAfterIt() {
        var plain = ""
        do {
            let secret = makeSecret("gone-")
            plain = secret.revealed
        }
        #expect(Redaction.redact("late echo \(plain)") == "late echo [redacted]")
        for _ in 0...Redaction.releasedCapacity { _ = makeSecret("churn-") }
        #expect(Redaction.redact("late echo \(plain)") == "late echo \(plain)")
    }

    @Test func errorsLogLinesAndSafeTextCarryNoSecret() {
        let secret = makeSecret()
        let plain = secret.revealed
        var error = ServiceError(.unauthorized, "GET /feed?token=\(plain)", "the server answered 401 (rejected Bearer \(plain))")
        #expect(error.description == "GET /feed?token=[redacted]: the server answered 401 (rejected Bearer [redacted])")
        error.reason = "again: \(plain)"
        #expect(error.reason == "again: [redacted]")
        let handler = RecordingLogHandler()
        let log = Logger(minimum: .debug, handler: handler)
        log.warn("sync_failed", ["feed": "home", "error": "refused \(plain)"])
        log.notice("the server said \(plain)")
        #expect(handler.all == ["warn sync_failed feed=home error=refused [redacted]", "info notice detail=the server said [redacted]"])
        #expect(Terminal.safe("x\(plain)\u{1B}[2J") == "x[redacted]\\u{1b}[2J")
        withExtendedLifetime(secret) {}
    }
}
