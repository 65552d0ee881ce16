import App
import Foundation
#if canImport(Glibc)
import CMalloc
import Glibc

// Two malloc arenas rather than glibc's eight per core, before any thread starts: with 100,000
// feeds each arena kept its own high-water mark of what the syncs and the status reads had
// freed, and the daemon's peak RSS was 351 MiB rather than 310 MiB (issue 40). The environment's
// MALLOC_ARENA_MAX, when set, is glibc's own and wins.
if ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] == nil { _ = mallopt(M_ARENA_MAX, 2) }
#endif

let status = await DaemonCLI.run(Array(CommandLine.arguments.dropFirst()))
exit(status.rawValue)
