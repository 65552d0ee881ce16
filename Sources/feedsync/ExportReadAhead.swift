/// How far `export`'s reading runs ahead of its writing: a page is entered before it is read
/// and left once its bytes are handed to the writing, so at most ``pages`` are held at once
/// (memory stays flat however fast the store reads).
actor ExportReadAhead {
    private var free: Int
    private var waiting: [CheckedContinuation<Bool, Never>] = []
    private var closed = false

    /// Room for `pages` pages.
    init(pages: Int) { free = pages }

    /// Waits for room for one more page; `false` once ``close()`` was called (read no more).
    func enter() async -> Bool {
        if closed { return false }
        if free > 0 {
            free -= 1
            return true
        }
        return await withCheckedContinuation { waiting.append($0) }
    }

    /// Makes room for one page: the next waiting reader goes on.
    func leave() {
        if waiting.isEmpty {
            free += 1
        } else {
            waiting.removeFirst().resume(returning: true)
        }
    }

    /// Ends the reading: a waiting reader, and every later one, is told to stop.
    func close() {
        closed = true
        for reader in waiting { reader.resume(returning: false) }
        waiting.removeAll()
    }
}
