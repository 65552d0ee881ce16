import Core

/// A lease on `feed` for tests of the SQLite store's write path. The store's lease is this
/// process's hold on its file lock, which its commits need not check (the kernel keeps it until
/// it is given back), so these tests write without taking it, as many stores at once may.
func testLease(_ feed: String) -> FeedLease { FeedLease(feed: feed, token: "test") }
