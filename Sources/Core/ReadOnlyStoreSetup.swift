/// A store's lifecycle that can also open the store only to look at it: `feedsync config check`
/// reads what the store remembers (feeds discovered or moved) this way, and changes nothing.
public protocol ReadOnlyStoreSetup: IntegrationLifecycle {
    /// Opens the store to read only: nothing is created, migrated, made private or locked, and
    /// a server that does not answer is given up on within seconds. Tear down as usual.
    ///
    /// - Throws: ``ServiceError``: `.notFound` when there is no store yet, `.refused` when its
    ///   schema is not this version's (the next `feedsync pull` upgrades it), `.storage` when it
    ///   cannot be reached or read. Each says why in one sentence.
    func setUpToRead() async throws
}
