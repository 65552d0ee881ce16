import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One lock under which every test module makes pipes and starts processes.
///
/// Foundation's `Process.run()` lists the descriptors open in the test process, then starts the
/// child closing those; one made meanwhile by another test goes to the child. Were it another
/// child's output pipe, or the socket Foundation watches to learn that a child ended, and the new
/// child a server or daemon that lives as long as its test, the other test's read to end of file
/// or its wait for the exit would not end before it (a `feedsync` was seen left a zombie, its test
/// waiting for ever). So pipes are made and marked close-on-exec, and processes started, one at a
/// time, in every module that starts processes: the tests all run in one process.
private let spawnLock = NSLock()

/// A pipe no child inherits by accident: made under the spawn lock and marked close-on-exec
/// (the child that is handed an end gets its own copy as 0, 1 or 2, which stays open).
public func makePipe() -> Pipe {
    spawnLock.withLock {
        let pipe = Pipe()
        for fd in [pipe.fileHandleForReading.fileDescriptor, pipe.fileHandleForWriting.fileDescriptor] {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        return pipe
    }
}

/// Starts `process` under the spawn lock; its pipes should come from ``makePipe()``.
public func launch(_ process: Process) throws {
    try spawnLock.withLock { try process.run() }
}

/// Closes both ends of pipes a test is done with: Foundation keeps every `Process`, and with it
/// the pipes it was given, for the life of the test process.
public func closeEnds(_ pipes: Pipe...) {
    for pipe in pipes {
        try? pipe.fileHandleForReading.close()
        try? pipe.fileHandleForWriting.close()
    }
}
