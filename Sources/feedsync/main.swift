import App
import Foundation

// Before anything opens a file: a closed standard output must not lend its number to the store.
StandardDescriptors.reserveClosed()
// A pipe whose reader left makes a write fail with EPIPE rather than killing the process, so an
// export removes its temporary file and the command exits 74 (see `FeedsyncCLI.fail`).
signal(SIGPIPE, SIG_IGN)
// Likewise a file size limit (`ulimit -f`): the write fails with EFBIG, reported as exit 74.
signal(SIGXFSZ, SIG_IGN)
let status = await FeedsyncCLI.run(Array(CommandLine.arguments.dropFirst()))
exit(status.rawValue)
