import Foundation

/// The local mirror, every role at once: what a store integration provides.
///
/// Each role is its own small protocol, so code (and a test's mock) asks only for the roles it
/// uses: the sync engine needs a ``PageCommitter``, a ``VideoCache``, a ``FeedSweeper``, a
/// ``SyncRecorder``, a ``SessionKeeper`` and ``FeedLeases``; the daemon adds ``DaemonPresence``;
/// the commands that read use a ``FeedReader``; the live mirror a ``LiveStateRecorder`` and a
/// ``StreamPositionReader``; the reader listener a ``ReaderAccountStore``.
///
/// Every feed is its own namespace: post, user and video ids are unique within a feed.
public typealias FeedStore = PageCommitter & VideoCache & FeedSweeper & SyncRecorder & SessionKeeper & FeedLeases
    & DaemonPresence & FeedReader & ReadMarker & FeedPurger & LiveStateRecorder & StreamPositionReader & ReaderAccountStore
    & PostPruner & WebhookQueue & MediaLedger & PostRuleSweeper
