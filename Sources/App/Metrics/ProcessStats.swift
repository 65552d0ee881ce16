import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The process's own figures, read from `/proc` as Prometheus's process collector reads them.
public struct ProcessStats: Sendable {
    public var residentBytes: Int?
    public var openDescriptors: Int?

    /// The figures now.
    public static func current() -> ProcessStats {
        ProcessStats(residentBytes: residentBytes(), openDescriptors: openDescriptors())
    }

    /// Resident pages (`/proc/self/statm`, second field) times the page size.
    static func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Entries of `/proc/self/fd`, less the one the listing itself holds open.
    static func openDescriptors() -> Int? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if name != "." && name != ".." { count += 1 }
        }
        return max(0, count - 1)
    }

    /// When the process started: field 22 of `/proc/self/stat` (clock ticks after boot) plus
    /// the boot time from `/proc/stat`.
    public static let startTime: Date? = {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command name, which may hold spaces, start at field 3.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let ticks = Double(fields[19]),
              let system = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = system.split(separator: "\n").first(where: { $0.hasPrefix("btime ") }),
              let boot = Double(line.dropFirst(6).trimmingCharacters(in: .whitespaces)) else { return nil }
        return Date(timeIntervalSince1970: boot + ticks / Double(sysconf(Int32(_SC_CLK_TCK))))
    }()
}
