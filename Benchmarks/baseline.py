#!/usr/bin/env python3
"""The Python baseline: the feed synced into SQLite the way the popular "X-to-sqlite" tools do it.

dogsheep's twitter-to-sqlite, github-to-sqlite, mastodon-to-sqlite and their kin share one shape,
and this copies it on purpose rather than tuning it: a requests.Session, then page by page follow
the cursor, and for each page hand the rows to sqlite-utils' upsert_all (which commits each call on
its own), authors into "users", posts into "posts", their videos into "videos" and "post_videos".

The schema is built the way mastodon-to-sqlite 0.2.1's build_database() builds its own, so that it
holds what feedsync's does: tables created with their foreign keys (posts.author_id -> users.id,
post_videos -> posts and videos), full-text search with sqlite-utils'
`enable_fts(..., create_triggers=True)` on the posts' text and on the users' handle and name (kept
in step by triggers on every write), and indexes on what the foreign keys and the newest-first
listing read (posts.author_id, posts.created_at, post_videos.video_id). It is the yardstick
feedsync is meant to beat, so it should look like what people actually run, not like a
hand-optimised loader.

Needs `requests` and `sqlite-utils` (bench.py installs them into Benchmarks/.venv). Prints one JSON
object: {"pages", "upserted", "deleted"}.
"""
import argparse
import json
import os
import sys

import requests
import sqlite_utils


def post_row(post):
    counts = post.get("counts") or {}
    return {
        "id": post["id"],
        "author_id": post["author"]["id"],
        "text": post["text"],
        "created_at": post["created_at"],
        "edited_at": post.get("edited_at"),
        "reply_to": post.get("reply_to"),
        "reply_count": counts.get("replies", 0),
        "repost_count": counts.get("reposts", 0),
        "like_count": counts.get("likes", 0),
        # sqlite-utils would store a list as JSON text anyway; doing it here keeps the column a string.
        "video_ids": json.dumps(post.get("video_ids") or []),
    }


def user_row(author):
    return {
        "id": author["id"],
        "handle": author["handle"],
        "display_name": author.get("display_name") or author["handle"],
        "avatar_url": author.get("avatar_url"),
    }


def build_database(db):
    """Tables with foreign keys, full-text search kept by triggers, and indexes, as
    mastodon-to-sqlite's build_database() does for its statuses and accounts."""
    users, posts, videos, post_videos = db["users"], db["posts"], db["videos"], db["post_videos"]
    if not users.exists():
        users.create({"id": str, "handle": str, "display_name": str, "avatar_url": str}, pk="id")
        users.enable_fts(["handle", "display_name"], create_triggers=True)
    if not posts.exists():
        posts.create({"id": str, "author_id": str, "text": str, "created_at": str, "edited_at": str, "reply_to": str,
                      "reply_count": int, "repost_count": int, "like_count": int, "video_ids": str},
                     pk="id", foreign_keys=(("author_id", "users", "id"),))
        posts.enable_fts(["text"], create_triggers=True)
    if not videos.exists():
        videos.create({"id": str}, pk="id")
    if not post_videos.exists():
        post_videos.create({"post_id": str, "position": int, "video_id": str}, pk=("post_id", "position"),
                           foreign_keys=(("post_id", "posts", "id"), ("video_id", "videos", "id")))
    indexes = {(table.name, tuple(i.columns)) for table in (posts, post_videos) for i in table.indexes}
    for table, columns in ((posts, ["author_id"]), (posts, ["created_at"]), (post_videos, ["video_id"])):
        if (table.name, tuple(columns)) not in indexes:
            table.create_index(columns)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base-url", required=True)
    p.add_argument("--db", required=True, help="SQLite file (created if missing)")
    p.add_argument("--limit", type=int, default=500, help="page size")
    p.add_argument("--username", default="demo")
    p.add_argument("--password-env", default="FEEDSYNC_PASSWORD")
    args = p.parse_args()

    session = requests.Session()
    r = session.post(args.base_url + "/v1/auth/login",
                     json={"username": args.username, "password": os.environ[args.password_env]})
    r.raise_for_status()
    # Like those tools, no token refresh: a full sync finishes well inside the 15-minute token life.
    session.headers["Authorization"] = "Bearer " + r.json()["access_token"]

    db = sqlite_utils.Database(args.db)
    build_database(db)
    cursor, pages, upserted, deleted = None, 0, 0, 0
    while True:
        params = {"limit": args.limit}
        if cursor is not None:
            params["cursor"] = cursor
        r = session.get(args.base_url + "/v1/feed", params=params)
        r.raise_for_status()
        page = r.json()
        pages += 1

        posts, authors, links, gone = [], {}, [], []
        for change in page["changes"]:
            if change["op"] == "upsert":
                post = change["post"]
                posts.append(post_row(post))
                authors[post["author"]["id"]] = user_row(post["author"])
                links += [{"post_id": post["id"], "position": i, "video_id": v}
                          for i, v in enumerate(post.get("video_ids") or [])]
            elif change["op"] == "delete":
                gone.append(change["id"])
        if authors:
            db["users"].upsert_all(authors.values(), pk="id")
        if links:
            db["videos"].upsert_all([{"id": v} for v in {link["video_id"] for link in links}], pk="id")
        if posts:
            db["posts"].upsert_all(posts, pk="id")
            upserted += len(posts)
        if links:
            db["post_videos"].upsert_all(links, pk=("post_id", "position"))
        if gone:
            marks = ", ".join("?" * len(gone))
            db["post_videos"].delete_where(f"post_id IN ({marks})", gone)
            db["posts"].delete_where(f"id IN ({marks})", gone)
            deleted += len(gone)

        cursor = page["next_cursor"]
        if not page["has_more"]:
            break

    json.dump({"pages": pages, "upserted": upserted, "deleted": deleted}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
