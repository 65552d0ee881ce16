import Core
import Foundation

/// A write, flush or close of the command's output that failed: the output is lost or cut
/// short, so the command exits 74 (EX_IOERR), whatever else it did.
public struct OutputError: Error, CustomStringConvertible {
    /// What was written to: `standard output`, or the file's path.
    public var target: String
    /// The `errno` the system call set.
    public var code: Int32

    public init(target: String, code: Int32) {
        self.target = target
        self.code = code
    }

    /// The reader of a pipe went away (`feedsync posts | head -1`): not worth a sentence.
    public var isBrokenPipe: Bool { code == EPIPE }

    public var description: String {
        let reason = switch code {
        case EBADF: "it is not open for writing (was it closed?)"
        case ENOSPC: "no space is left on the device"
        case EDQUOT: "the disk quota is exhausted"
        case EFBIG: "the file grew past the size this process may write (ulimit -f)"
        case EPIPE: "its reader went away (broken pipe)"
        default: String(cString: strerror(code))
        }
        return "writing \(Terminal.safe(target, limit: 400)) failed: \(reason); the output is incomplete"
    }
}
