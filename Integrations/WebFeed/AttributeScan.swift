import Foundation

/// A byte-level look at start tags ahead of libxml2: how many attributes the open one has.
///
/// It follows only what matters for counting: `<` opens a start tag when a name follows;
/// comments, CDATA sections and declarations (`<!`) are skipped to their end; a quote opens a
/// value only after `=`; `>` outside a value closes the tag.
struct AttributeScan {
    private enum State: Equatable {
        case text
        case lessThan
        /// After `<!`, before the kind is known.
        case bang
        /// Skipping to a `>` after the bytes given (`--` for a comment, `]]` for CDATA, `?` for
        /// a processing instruction; zero matches any byte, so a declaration ends at any `>`).
        case skipping(UInt8, UInt8)
        case tag
        case value(UInt8)
    }

    private var state = State.text
    private var afterEquals = false
    private var equals = 0
    /// The last two bytes read, for the end of a comment or CDATA section.
    private var previous: (UInt8, UInt8) = (0, 0)

    /// Reads the next chunk; a sentence when an element has too many attributes.
    mutating func read(_ chunk: UnsafeRawBufferPointer, maxAttributes: Int) -> String? {
        guard let base = chunk.baseAddress else { return nil }
        var at = 0
        while at < chunk.count {
            switch state {
            case .text:
                guard let hit = memchr(base + at, 0x3C, chunk.count - at) else { return nil }
                at = base.distance(to: UnsafeRawPointer(hit)) + 1
                state = .lessThan
                continue
            case .skipping(let first, let second):
                guard let hit = memchr(base + at, 0x3E, chunk.count - at) else {
                    remember(chunk, upTo: chunk.count)
                    return nil
                }
                let end = base.distance(to: UnsafeRawPointer(hit))
                remember(chunk, upTo: end)
                at = end + 1
                if (first == 0 || previous.0 == first) && (second == 0 || previous.1 == second) { state = .text } else { previous = (previous.1, 0x3E) }
                continue
            default:
                break
            }
            let byte = chunk[at]
            at += 1
            switch state {
            case .value(let quote):
                if byte == quote { state = .tag }
            case .lessThan:
                switch byte {
                case UInt8(ascii: "!"): state = .bang
                case UInt8(ascii: "?"): state = .skipping(0, UInt8(ascii: "?"))
                case UInt8(ascii: "/"): state = .skipping(0, 0)
                default:
                    state = .tag
                    equals = 0
                    afterEquals = false
                }
            case .bang:
                previous = (0, 0)
                switch byte {
                case UInt8(ascii: "-"): state = .skipping(UInt8(ascii: "-"), UInt8(ascii: "-"))
                case UInt8(ascii: "["): state = .skipping(UInt8(ascii: "]"), UInt8(ascii: "]"))
                default: state = .skipping(0, 0)
                }
            case .tag:
                switch byte {
                case UInt8(ascii: ">"):
                    state = .text
                case UInt8(ascii: "="):
                    equals += 1
                    afterEquals = true
                    if equals > maxAttributes { return "an element has more than \(maxAttributes) attributes" }
                case UInt8(ascii: "\""), UInt8(ascii: "'"):
                    if afterEquals { state = .value(byte) }
                    afterEquals = false
                case 0x20, 0x09, 0x0A, 0x0D:
                    break
                default:
                    afterEquals = false
                }
            default:
                break
            }
        }
        return nil
    }

    /// Keeps the two bytes before `end` in `chunk` (with those of earlier chunks when it is short).
    private mutating func remember(_ chunk: UnsafeRawBufferPointer, upTo end: Int) {
        if end >= 2 {
            previous = (chunk[end - 2], chunk[end - 1])
        } else if end == 1 {
            previous = (previous.1, chunk[0])
        }
    }
}
