import Foundation

/// The person's web browser, for a sign-in that continues there.
public enum Browser {
    /// Whether a graphical session is there (`DISPLAY` or `WAYLAND_DISPLAY` set).
    public static func isAvailable(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
    }

    /// Opens `url` with xdg-open, quietly; the sign-in prints the address anyway.
    public static func open(_ url: URL) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["xdg-open", url.absoluteString]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
    }
}
