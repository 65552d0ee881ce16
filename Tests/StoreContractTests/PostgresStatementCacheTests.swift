@testable import PostgresStore
import Testing

/// The cache's decisions, without a server.
struct PostgresStatementCacheTests {
    @Test func onlyStatementsWithParametersRunTwiceArePreparedAndOnlyOnce() {
        var cache = PostgresStatementCache()
        #expect(cache.use("BEGIN", parameters: 0) == .unnamed)
        #expect(cache.use("BEGIN", parameters: 0) == .unnamed)
        #expect(cache.use("SELECT $1", parameters: 1) == .unnamed)
        guard case .prepare(let name) = cache.use("SELECT $1", parameters: 1) else { Issue.record("not prepared at its second run"); return }
        cache.prepared("SELECT $1", as: name)
        #expect(cache.use("SELECT $1", parameters: 1) == .prepared(name))
        // A prepare the server did not confirm is tried again under a new name at the next run.
        #expect(cache.use("SELECT $2", parameters: 2) == .unnamed)
        let first = cache.use("SELECT $2", parameters: 2)
        #expect(cache.use("SELECT $2", parameters: 2) == .unnamed)
        let second = cache.use("SELECT $2", parameters: 2)
        #expect(first != second && first != .unnamed && second != .unnamed)
    }

    @Test func theCacheIsBoundedAndANewSessionOrALostOneForgetsIt() {
        var cache = PostgresStatementCache()
        for index in 0 ..< PostgresStatementCache.limit + 10 {
            let sql = "SELECT \(index), $1"
            _ = cache.use(sql, parameters: 1)
            if case .prepare(let name) = cache.use(sql, parameters: 1) { cache.prepared(sql, as: name) }
        }
        let prepared = (0 ..< PostgresStatementCache.limit + 10).filter {
            if case .prepared = cache.use("SELECT \($0), $1", parameters: 1) { true } else { false }
        }
        #expect(prepared.count == PostgresStatementCache.limit)
        cache.forget()
        #expect(cache.use("SELECT 0, $1", parameters: 1) == .unnamed, "a new session holds none")
        cache.stop()
        #expect(!cache.isEnabled)
        for _ in 0 ..< 3 { #expect(cache.use("SELECT 0, $1", parameters: 1) == .unnamed) }
    }
}
