#if canImport(Glibc)
import Glibc
#endif

/// The three standard descriptors as a process started with some of them closed sees them.
public enum StandardDescriptors {
    /// Puts `/dev/null`, opened for reading only, on each of descriptors 0, 1 and 2 that is
    /// closed, and says whether standard output was.
    ///
    /// Started with `>&-`, a process would otherwise hand descriptor 1 to the next file it
    /// opens (the store!), and what it prints would land in that file. Read-only, the stand-in
    /// makes every write to standard output fail with `EBADF`, so the loss is reported (exit 74).
    /// Call it first thing, before anything opens a file.
    @discardableResult
    public static func reserveClosed() -> (input: Bool, output: Bool, error: Bool) {
        let closed = (0...2).map { fcntl(Int32($0), F_GETFD) == -1 && errno == EBADF }
        for (descriptor, isClosed) in closed.enumerated() where isClosed {
            let opened = open("/dev/null", O_RDONLY)
            // `open` takes the lowest free number; make sure it is this one.
            if opened >= 0, opened != Int32(descriptor) {
                _ = dup2(opened, Int32(descriptor))
                _ = close(opened)
            }
        }
        return (closed[0], closed[1], closed[2])
    }
}
