/// One request made ahead of its turn: a page walk asks for its next page once it knows the
/// address, while it works on the page it has, so the server's time and the client's overlap.
///
/// Only the next call that asks for the same address, soon after, gets the answer; any other
/// call, or one too late, drops it (and cancels it if it is still on its way). So a walk that
/// stops early costs the server at most the one request, and no answer older than the window
/// is handed over. An answer nobody asks for is dropped when the window closes, so a walk that
/// failed does not hold its next page in memory until the feed's next sync. An answer's failure
/// is the failure of the call that takes it, as if that call had made the request itself.
public actor ReadAhead<Answer: Sendable> {
    private var pending: (key: String, started: ContinuousClock.Instant, task: Task<Answer, any Error>, expiry: Task<Void, Never>)?
    private let freshFor: Duration

    /// `freshFor`: how long an answer may wait for the call that asks for it.
    public init(freshFor: Duration = .seconds(30)) {
        self.freshFor = freshFor
    }

    /// Starts `fetch` for `key`, dropping any request made ahead before it.
    public func start(_ key: String, _ fetch: @escaping @Sendable () async throws -> Answer) {
        drop()
        let task = Task { try await fetch() }
        let expiry = Task { [weak self, freshFor] in
            try? await Task.sleep(for: freshFor)
            guard !Task.isCancelled else { return }
            await self?.expire(task)
        }
        pending = (key, .now, task, expiry)
    }

    /// The answer made ahead for `key`, or nil when there is none for it (nothing is left made
    /// ahead either way). Cancelling the caller cancels the request.
    public nonisolated func answer(for key: String) async throws -> Answer? {
        guard let task = await claim(key) else { return nil }
        return try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
    }

    /// Whether a request is made ahead and not yet taken or dropped.
    public var isPending: Bool { pending != nil }

    private func claim(_ key: String) -> Task<Answer, any Error>? {
        guard let pending else { return nil }
        self.pending = nil
        pending.expiry.cancel()
        guard pending.key == key, ContinuousClock.now - pending.started < freshFor else {
            pending.task.cancel()
            return nil
        }
        return pending.task
    }

    /// Drops the request `task` if it is still the one made ahead: its window has closed.
    private func expire(_ task: Task<Answer, any Error>) {
        if pending?.task == task { drop() }
    }

    /// Drops the request made ahead, cancelling it if it is still on its way.
    private func drop() {
        pending?.task.cancel()
        pending?.expiry.cancel()
        pending = nil
    }
}
