import Foundation
import IntegrationKit

/// argon2id checks off Swift's cooperative threads (each takes 64 MiB and a good part of a
/// second on a busy machine), at most ``limit`` at once: more logins wait their turn, so a
/// burst of them cannot take the memory or the threads of the daemon.
actor PasswordCheck {
    static let limit = 2

    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Whether `password` is the one `hash` was made from.
    func verify(_ password: String, against hash: String) async -> Bool {
        if running >= Self.limit { await withCheckedContinuation { waiting.append($0) } } else { running += 1 }
        let matches = await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: PasswordHash.verify(password, against: hash)) }
        }
        if waiting.isEmpty { running -= 1 } else { waiting.removeFirst().resume() }
        return matches
    }
}
