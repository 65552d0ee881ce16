import App
import Foundation

let status = await FeedsyncCLI.run(Array(CommandLine.arguments.dropFirst()))
exit(status.rawValue)
