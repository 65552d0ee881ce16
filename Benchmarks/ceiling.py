#!/usr/bin/env python3
"""The download ceiling: how fast can any client possibly pull the whole feed from this server?

One keep-alive connection, log in, then every page from no cursor to has_more=false, each body
read in full. With --parse each page goes through json.loads (what a client must at least do);
without it only next_cursor and has_more are picked out of the body's tail, so the figure is bound
by the server and the socket alone. Nothing is stored.

With --mastodon it walks the fake Mastodon server's home timeline instead, as every Mastodon client
does: verify_credentials, then GET /api/v1/timelines/home?limit=K and each rel="next" of the Link
header until the empty page that ends the timeline.

Prints one JSON object: {"seconds", "pages", "body_bytes", "parsed"}. The clock runs from opening
the connection to the last byte of the last page, so interpreter start-up is not charged to it:
that makes the ceiling as high as it can be, and the ratio against it as strict as it can be.

Standard library and benchkit only; bench.py also runs it once, untimed, to warm the server's page cache.
"""
import argparse
import http.client
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchkit import Broken, answer  # noqa: E402

# The body ends in  ],"next_cursor":"<c>","has_more":true}  (API.md); a regex over the tail finds
# both without decoding the changes.
TAIL = re.compile(rb'"next_cursor":"([^"]*)","has_more":(true|false)\}\s*$')


def walk(port, limit, username="demo", password="demo", parse=False):
    """(seconds, pages, body bytes) for one full walk of the feed."""
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    _, body = answer(conn, "POST", "/v1/auth/login", {"Content-Type": "application/json"},
                     json.dumps({"username": username, "password": password}))
    headers = {"Authorization": "Bearer " + json.loads(body)["access_token"]}
    cursor, pages, total = None, 0, 0
    while True:
        path = f"/v1/feed?limit={limit}" + (f"&cursor={cursor}" if cursor is not None else "")
        _, body = answer(conn, "GET", path, headers)
        pages, total = pages + 1, total + len(body)
        if parse:
            page = json.loads(body)
            cursor, has_more = page["next_cursor"], page["has_more"]
        else:
            m = TAIL.search(body, max(0, len(body) - 200))
            if m is None:
                raise Broken(f"no next_cursor/has_more at the end of {path}")
            cursor, has_more = m.group(1).decode(), m.group(2) == b"true"
        if not has_more:
            break
    conn.close()
    return time.perf_counter() - started, pages, total


LINK_NEXT = re.compile(r'<([^>]+)>;\s*rel="next"')


def walk_mastodon(port, limit, token, parse=False):
    """(seconds, pages, body bytes) for one walk of the home timeline back to its end."""
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": "Bearer " + token}
    answer(conn, "GET", "/api/v1/accounts/verify_credentials", headers)
    path, pages, total = f"/api/v1/timelines/home?limit={limit}", 0, 0
    prefix = f"http://127.0.0.1:{port}"
    while True:
        resp, body = answer(conn, "GET", path, headers)
        pages, total = pages + 1, total + len(body)
        if parse:
            empty = not json.loads(body)
        else:
            empty = body == b"[]"
        if empty:
            break
        m = LINK_NEXT.search(resp.getheader("Link") or "")
        if m is None or not m.group(1).startswith(prefix):
            raise Broken(f"no rel=\"next\" link on this server after {path}")
        path = m.group(1)[len(prefix):]
    conn.close()
    return time.perf_counter() - started, pages, total


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--limit", type=int, default=500, help="page size (the feed's limit parameter)")
    p.add_argument("--username", default="demo")
    p.add_argument("--password", default="demo")
    p.add_argument("--parse", action="store_true", help="json.loads every page")
    p.add_argument("--mastodon", action="store_true", help="walk the fake Mastodon server's home timeline")
    p.add_argument("--token", default="test-token", help="the Mastodon access token (with --mastodon)")
    args = p.parse_args()
    try:
        if args.mastodon:
            seconds, pages, total = walk_mastodon(args.port, args.limit, args.token, args.parse)
        else:
            seconds, pages, total = walk(args.port, args.limit, args.username, args.password, args.parse)
    except Broken as e:
        raise SystemExit(f"ceiling: {e}") from e
    json.dump({"seconds": seconds, "pages": pages, "body_bytes": total, "parsed": args.parse}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
