import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a sign-in asks the person at the terminal: a line (a pasted code) within a deadline,
/// or a secret typed without echo.
public enum TerminalPrompt {
    /// A line from standard input, or `nil` at its end or after `seconds`.
    public static func readLine(within seconds: TimeInterval) async -> String? {
        await withTaskGroup(of: String?.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    Thread.detachNewThread { continuation.resume(returning: Swift.readLine(strippingNewline: true)) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// A secret from the terminal without echo (the prompt on standard error), or a line of
    /// standard input when it is not a terminal; trimmed, and `nil` when empty or absent.
    public static func readSecret(prompt: String) -> String? {
        var line: String?
        if isatty(STDIN_FILENO) == 1 {
            FileHandle.standardError.write(Data(prompt.utf8))
            var saved = termios()
            tcgetattr(STDIN_FILENO, &saved)
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSANOW, &silent)
            line = Swift.readLine(strippingNewline: true)
            tcsetattr(STDIN_FILENO, TCSANOW, &saved)
            FileHandle.standardError.write(Data("\n".utf8))
        } else {
            line = Swift.readLine(strippingNewline: true)
        }
        guard let secret = line?.trimmingCharacters(in: .whitespaces), !secret.isEmpty else { return nil }
        return secret
    }
}
