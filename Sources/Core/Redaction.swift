import Synchronization

/// The one place a secret is taken out of text on its way out of the process (STYLE: "Secrets
/// have one exit").
///
/// Every ``Secret`` registers its text here when it is made and stays registered while any copy
/// of it lives, and for a while after (the last ``releasedCapacity`` let go, so a token replaced
/// while a request that carried it was still out is still known when its error comes back).
/// ``redact(_:)`` replaces every occurrence of a registered secret with ``marker``:
/// - as it is, in any ASCII case;
/// - percent-encoded (`%2B`, `%2b`, `+` for a space), JSON-escaped (`\u0041`, `\/`), as HTML
///   character references (`&#65;`, `&amp;`), or several of these over each other (up to
///   ``decodingLayers`` deep);
/// - in base64 or base64url, at any offset: inside a Basic credential (`user:secret`), say;
/// - in part: any run of ``minimumLength`` or more consecutive bytes of a secret, so one that a
///   server cut short, or split over lines, is taken out too.
///
/// The logger, ``ServiceError``, ``Terminal/safe(_:limit:)`` (before it cuts anything short),
/// what the executables write to standard output and standard error, and the stores' error and
/// state columns all pass through here, so no code path has to remember to.
///
///     let token = Secret("k3Jx9-bearer-token-value")
///     Redaction.redact("rejected Bearer k3Jx9-bearer-token-value")   // "rejected Bearer [redacted]"
///
/// - Important: A secret shorter than ``minimumLength`` bytes is not registered: it would match
///   ordinary words and numbers in messages, and what is replaced would show the secret to
///   anyone who can put text in front of it.
public enum Redaction {
    /// What stands where a secret was.
    public static let marker = "[redacted]"
    /// The shortest secret registered, and the shortest piece of one that is taken out.
    public static let minimumLength = RedactionTable.window
    /// How many secrets let go are still redacted.
    public static let releasedCapacity = 256
    /// How many layers of encoding over each other are undone (`%25`-encoded percent-encoding is two).
    public static let decodingLayers = 3

    /// `text` with every registered secret, in any of the forms above, replaced by ``marker``.
    public static func redact(_ text: String) -> String {
        // Most commands hold no secret at all (`posts`, `status`): they pay one atomic load a line.
        guard anyRegistered.load(ordering: .acquiring) else { return text }
        let table = registry.withLock { $0.table }
        guard !table.isEmpty, text.utf8.count >= minimumLength else { return text }
        var copy = text
        return copy.withUTF8 { bytes in
            var found = table.matches(in: EncodedView(original: bytes))
            if EncodedView.mayHoldEscapes(bytes) {
                var view = EncodedView(original: bytes)
                for _ in 0..<decodingLayers {
                    if view.withBytes({ $0.contains(UInt8(ascii: "+")) }), let form = view.decoded(plusAsSpace: true) {
                        found += table.matches(in: form)
                    }
                    guard let decoded = view.decoded() else { break }
                    found += table.matches(in: decoded)
                    view = decoded
                }
            }
            return found.isEmpty ? text : replace(found, in: bytes)
        }
    }

    /// Whether a secret has been registered in this process: until one is, ``redact(_:)`` returns
    /// every text as it is, so a writer that knows what it writes may skip it.
    public static var holdsAny: Bool { anyRegistered.load(ordering: .acquiring) }

    /// `text` redacted, or `nil`.
    public static func redact(_ text: String?) -> String? { text.map { redact($0) } }

    /// Registers `text` for as long as the returned hold lives; `nil` for a text too short.
    static func hold(_ text: String) -> Hold? {
        guard text.utf8.count >= minimumLength else { return nil }
        registry.withLock {
            $0.hold(text)
            anyRegistered.store(true, ordering: .releasing)
        }
        return Hold(text: text)
    }

    /// Keeps a secret registered; the last copy of a ``Secret`` to go lets it go.
    final class Hold: Sendable {
        let text: String
        init(text: String) { self.text = text }
        deinit { registry.withLock { [text] in $0.release(text) } }
    }

    private static let registry = Mutex(Registry())
    /// Whether any text is registered, held or released; set under the registry's lock.
    private static let anyRegistered = Atomic(false)

    /// The registered texts and the table built from them.
    private struct Registry {
        /// Each held text, with how many holds it has.
        var held: [String: Int] = [:]
        /// Texts no longer held, oldest first.
        var released: [String] = []
        var table = RedactionTable()

        mutating func hold(_ text: String) {
            if let count = held[text] {
                held[text] = count + 1
            } else if let index = released.firstIndex(of: text) {
                released.remove(at: index)
                held[text] = 1
            } else {
                held[text] = 1
                table.add(text)
            }
        }

        mutating func release(_ text: String) {
            guard let count = held[text] else { return }
            guard count == 1 else { held[text] = count - 1; return }
            held[text] = nil
            released.append(text)
            if released.count > Redaction.releasedCapacity { table.remove(released.removeFirst()) }
        }
    }

    /// The bytes with each found range (widened to whole characters, joined where they touch)
    /// replaced by one marker.
    private static func replace(_ found: [Range<Int>], in bytes: UnsafeBufferPointer<UInt8>) -> String {
        var merged: [Range<Int>] = []
        for range in found.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            var start = range.lowerBound, end = range.upperBound
            // Never half a character: a continuation byte belongs to the character before it.
            while start > 0, bytes[start] & 0xC0 == 0x80 { start -= 1 }
            while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
            if let last = merged.last, start <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, end)
            } else {
                merged.append(start..<end)
            }
        }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var copied = 0
        for range in merged {
            result.append(contentsOf: bytes[copied..<range.lowerBound])
            result.append(contentsOf: marker.utf8)
            copied = range.upperBound
        }
        result.append(contentsOf: bytes[copied...])
        return String(decoding: result, as: UTF8.self)
    }
}
