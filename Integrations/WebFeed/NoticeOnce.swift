import Core
import Synchronization

/// Passes a sentence on the first time its kind is met (the sentence without its digits, so a
/// recovery at another line is the same kind), so a feed that needs the same help on every
/// poll says so once in the log (a ``Logger/notice(_:)``).
final class NoticeOnce: Sendable {
    private let log: Logger
    private let said = Mutex<Set<String>>([])

    init(log: Logger) { self.log = log }

    func say(_ sentence: String) {
        let kind = String(sentence.unicodeScalars.filter { !("0"..."9").contains($0) }.map(Character.init))
        guard said.withLock({ $0.count < 1_000 && $0.insert(kind).inserted }) else { return }
        log.notice(sentence)
    }
}
