import Synchronization

/// Passes a sentence on the first time its kind is met (the sentence without its digits, so a
/// recovery at another line is the same kind), so a feed that needs the same help on every
/// poll says so once in the log.
final class NoticeOnce: Sendable {
    private let notice: @Sendable (String) -> Void
    private let said = Mutex<Set<String>>([])

    init(notice: @escaping @Sendable (String) -> Void) { self.notice = notice }

    func say(_ sentence: String) {
        let kind = String(sentence.unicodeScalars.filter { !("0"..."9").contains($0) }.map(Character.init))
        guard said.withLock({ $0.count < 1_000 && $0.insert(kind).inserted }) else { return }
        notice(sentence)
    }
}
