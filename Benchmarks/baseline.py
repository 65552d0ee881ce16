#!/usr/bin/env python3
"""The Python baseline: the feed synced into SQLite the way the popular "X-to-sqlite" tools do it.

dogsheep's twitter-to-sqlite, github-to-sqlite and their kin share one shape, and this copies it on
purpose rather than tuning it: a requests.Session, then page by page follow the cursor, and for each
page hand the rows to sqlite-utils' upsert_all (which commits each call on its own), authors into
"users", posts into "posts". It is the yardstick feedsync is meant to beat, so it should look like
what people actually run, not like a hand-optimised loader.

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
    cursor, pages, upserted, deleted = None, 0, 0, 0
    while True:
        params = {"limit": args.limit}
        if cursor is not None:
            params["cursor"] = cursor
        r = session.get(args.base_url + "/v1/feed", params=params)
        r.raise_for_status()
        page = r.json()
        pages += 1

        posts, authors, gone = [], {}, []
        for change in page["changes"]:
            if change["op"] == "upsert":
                posts.append(post_row(change["post"]))
                authors[change["post"]["author"]["id"]] = user_row(change["post"]["author"])
            elif change["op"] == "delete":
                gone.append(change["id"])
        if authors:
            db["users"].upsert_all(authors.values(), pk="id")
        if posts:
            db["posts"].upsert_all(posts, pk="id")
            upserted += len(posts)
        if gone and db["posts"].exists():
            db["posts"].delete_where("id IN ({})".format(", ".join("?" * len(gone))), gone)
            deleted += len(gone)

        cursor = page["next_cursor"]
        if not page["has_more"]:
            break

    json.dump({"pages": pages, "upserted": upserted, "deleted": deleted}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
