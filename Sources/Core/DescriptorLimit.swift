import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Running out of file descriptors, said as such: the transport's and the store's failures
/// name the limit and how to raise it, rather than "unable to open database file" or "the
/// connection was refused".
///
///     if let reason = DescriptorLimit.reason(forErrno: errno) { throw ServiceError(.storage, operation, reason) }
public enum DescriptorLimit {
    /// The sentence for `code` when it means that no descriptor was left (`EMFILE`, `ENFILE`),
    /// else `nil`: `too many open files (the process limit is 64; raise it with ulimit -n or LimitNOFILE=)`.
    public static func reason(forErrno code: Int32) -> String? {
        switch code {
        case EMFILE:
            let limit = processLimit().map { "the process limit is \($0)" } ?? "the process limit is reached"
            return "too many open files (\(limit); raise it with ulimit -n or LimitNOFILE=)"
        case ENFILE:
            return "too many open files in the whole system (its table is full; raise fs.file-max, or close other programs)"
        default:
            return nil
        }
    }

    /// The sentence for a failure whose cause a library did not keep (an HTTP client may report a
    /// socket that could not be made as a refused connection): when this process cannot open one more
    /// descriptor right now, the limit is the likely cause and this says so; else `nil`.
    public static func reasonIfExhausted() -> String? {
        let probe = open("/dev/null", O_RDONLY | O_CLOEXEC)
        if probe >= 0 {
            close(probe)
            return nil
        }
        return reason(forErrno: errno)
    }

    /// `RLIMIT_NOFILE`'s soft limit, or `nil` when it is unlimited or cannot be read.
    public static func processLimit() -> UInt64? {
        var limit = rlimit()
        #if canImport(Glibc)
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        #else
        guard getrlimit(RLIMIT_NOFILE, &limit) == 0 else { return nil }
        #endif
        // RLIM_INFINITY is all bits set; Swift cannot import its C spelling, (rlim_t)-1.
        return limit.rlim_cur == rlim_t.max ? nil : UInt64(limit.rlim_cur)
    }
}
