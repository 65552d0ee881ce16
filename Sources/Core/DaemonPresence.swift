import Foundation

/// The daemons a store knows: one record per running `feedsyncd`, and the schedule they keep.
public protocol DaemonPresence: Sendable {
    /// Records this process as one of the store's daemons, until ``leave(_:)``.
    ///
    /// - Throws: ``ServiceError`` `.locked` from a store that allows one daemon at a time (a
    ///   SQLite file) when another already serves it.
    func join(startedAt: Date) async throws -> DaemonInstance

    /// Records that the daemon is alive now.
    func beat(_ daemon: DaemonInstance) async throws

    /// Removes the daemon's record and gives back what it held.
    func leave(_ daemon: DaemonInstance) async

    /// Records when this daemon will next sync a feed (`nil`: not scheduled).
    ///
    /// - Throws: ``ServiceError`` `.locked` from a shared store while another worker holds the
    ///   feed's lease, or when this worker's lease on it was taken over.
    func setNextAttempt(_ date: Date?, ofFeed feed: String) async throws

    /// Clears the next attempts this daemon recorded for `feeds`, when it stops: the daemon's
    /// own schedule only. On a shared store a feed another daemon scheduled since, or holds the
    /// lease on, keeps its schedule, so stopping one daemon never reschedules the others' work.
    func unschedule(_ feeds: [String]) async throws
}

/// One running daemon, as the store records it.
public struct DaemonInstance: Hashable, Sendable {
    /// Tells this daemon from every other, in the store.
    public var id: String
    /// The machine it runs on.
    public var host: String
    /// The process on that machine, as its operating system names it.
    public var process: String
    public var startedAt: Date
    public var beatAt: Date

    public init(id: String, host: String, process: String, startedAt: Date, beatAt: Date) {
        self.id = id
        self.host = host
        self.process = process
        self.startedAt = startedAt
        self.beatAt = beatAt
    }
}
