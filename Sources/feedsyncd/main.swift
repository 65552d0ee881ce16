import App
import Foundation

let status = await DaemonCLI.run(Array(CommandLine.arguments.dropFirst()))
exit(status.rawValue)
