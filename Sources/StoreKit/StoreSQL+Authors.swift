import Core
import Foundation

/// Authors: how a page's profiles and a stream's renames reach `users`.
///
/// Both stores keep a copy of each author's handle and name in their posts (`author_handle`,
/// `author_name`, for search), and both keep it in step the same way: the `users_au_profile`
/// trigger (SQLite migration 008, PostgreSQL migration 007) copies a changed handle or name
/// to the author's posts in the statement that changed it, so a profile and its copies are
/// committed together, whatever changed the profile (a page, a rename, another tool).
extension StoreSQL {
    /// Whether a page's profile (`excluded`) replaces the stored one (`users`): only if the post
    /// that carried it is at least as new as the one that set the stored one, whatever order
    /// pages commit in (a backfill commits newest first); and only if it changes something, so
    /// a row already as the page has it is not rewritten (a newer post with the same profile
    /// only moves `profile_at`).
    public var profileWins: String { Self.profileWins[dialect] }

    private static let profileWinsSQL = """
        excluded.profile_at >= coalesce(users.profile_at, excluded.profile_at)
            AND (excluded.profile_at > coalesce(users.profile_at, excluded.profile_at)
                 OR users.handle IS DISTINCT FROM excluded.handle OR users.display_name IS DISTINCT FROM excluded.display_name
                 OR users.avatar_url IS DISTINCT FROM excluded.avatar_url)
        """
    private static let profileWins = Shared(profileWinsSQL)

    /// What follows a page's `INSERT INTO users (feed, id, handle, display_name, avatar_url,
    /// profile_at) …` where the page's authors are written as a set (PostgreSQL's): the page's
    /// profile replaces the stored one where it wins (``profileWins``).
    public var userUpsert: String { Self.userUpsert[dialect] }

    private static let userUpsert = Shared("""
        ON CONFLICT (feed, id) DO UPDATE SET handle = excluded.handle, display_name = excluded.display_name,
            avatar_url = excluded.avatar_url, profile_at = excluded.profile_at
        WHERE \(profileWinsSQL)
        """)

    private static let rename = Shared("""
        UPDATE users SET handle = $3, profile_at = $4
        WHERE feed = $1 AND id = $2 AND handle IS DISTINCT FROM $3 AND coalesce(profile_at, $4) <= $4
        RETURNING 1
        """)

    /// Gives the feed's stored author the new handle unless a newer profile is stored, in a
    /// page's transaction (``FeedPage/renames``); one row returned when the handle changed.
    public func rename(_ rename: AuthorRename, inFeed feed: String) -> StoreStatement {
        statement(Self.rename, [.text(feed), .text(rename.author.rawValue), .text(rename.handle),
                                .integer(StoredTime.milliseconds(rename.at))])
    }
}

extension PostColumns {
    /// The columns a stored post's row may change: every one but its key (`id`).
    public static let changing = names.filter { $0 != "id" }

    /// `stored.c IS DISTINCT FROM incoming(c) OR …` over ``changing``, in `dialect`: whether a
    /// row differs from what is written over it.
    public static func differ(_ stored: String, _ incoming: (String) -> String, in dialect: SQLDialect) -> String {
        dialect.render(changing.map { "\(stored).\($0) IS DISTINCT FROM \(incoming($0))" }.joined(separator: " OR "))
    }
}
