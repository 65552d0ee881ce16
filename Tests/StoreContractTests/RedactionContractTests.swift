import Core
import Foundation
import Testing

/// What every store promises about the sentences it keeps from outside (`feeds.last_error`,
/// `sync_runs.error`, the withheld sweep, the live state): a registered secret in one is stored
/// as `[redacted]`, whoever wrote the sentence, because people publish their mirror.
enum RedactionContract {
    static func sentencesAreStoredWithTheirSecretsRedacted(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        let secret = Secret("store-SECRET-\(UUID().uuidString)")
        let plain = secret.revealed
        let percent = plain.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!.replacingOccurrences(of: "-", with: "%2D")
        try await underLease(store) { lease in
            try await store.recordSync(SyncOutcome(startedAt: Date(), finishedAt: Date(),
                                                   error: "GET /feed: the server answered 401 (rejected Bearer \(plain))"), under: lease)
        }
        var report = SyncReport(feed: "home")
        report.walkedToSweep = true
        report.sweepWithheld = "an item came without an id (near \(percent))"
        try await underLease(store) { lease in
            try await store.recordSync(SyncOutcome(startedAt: Date(), finishedAt: Date(), report: report), under: lease)
        }
        try await store.setLiveState("polling: the stream at https://x.example/?token=\(percent) was refused", ofFeed: "home")

        let status = try await other.feedStatuses().first { $0.feed == "home" }
        #expect(status?.lastError == "GET /feed: the server answered 401 (rejected Bearer [redacted])")
        #expect(status?.sweepWithheld == "an item came without an id (near [redacted])")
        #expect(try await other.liveStates()["home"] == "polling: the stream at https://x.example/?token=[redacted] was refused")
        withExtendedLifetime(secret) {}
    }
}

@Suite struct SQLiteRedactionContractTests {
    @Test func sentencesAreStoredWithTheirSecretsRedacted() async throws {
        try await RedactionContract.sentencesAreStoredWithTheirSecretsRedacted(.sqlite)
    }
}

@Suite(.needsPostgres) struct PostgresRedactionContractTests {
    @Test func sentencesAreStoredWithTheirSecretsRedacted() async throws {
        try await RedactionContract.sentencesAreStoredWithTheirSecretsRedacted(.postgres)
    }
}
