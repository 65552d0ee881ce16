#!/usr/bin/env python3
"""Self-check for the fake Bluesky service: python3 Fixtures/bluesky/test_server.py"""
import base64
import http.client
import json
import os
import signal
import subprocess
import sys
import time
import unittest
from urllib.parse import quote

SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "server.py")
LOGIN = {"identifier": "me.test", "password": "app-pass-word"}


class Server:
    def __init__(self, *args):
        self.proc = subprocess.Popen([sys.executable, SERVER, "--port", "0", "--exit-on-stdin-eof", *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        assert line.startswith("listening on 127.0.0.1:"), line
        self.conn = http.client.HTTPConnection("127.0.0.1", int(line.rsplit(":", 1)[1]), timeout=10)

    def call(self, method, path, body=None, token=None):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if body is not None:
            headers["Content-Type"] = "application/json"
        self.conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        resp = self.conn.getresponse()
        return resp.status, resp, json.loads(resp.read())

    def login(self):
        status, _, out = self.call("POST", "/xrpc/com.atproto.server.createSession", LOGIN)
        assert status == 200, out
        return out

    def walk(self, token, method="app.bsky.feed.getTimeline", query="", key="feed"):
        items, cursor, pages = [], None, 0
        while True:
            path = f"/xrpc/{method}?limit=100{query}" + (f"&cursor={quote(cursor)}" if cursor else "")
            status, _, out = self.call("GET", path, token=token)
            assert status == 200, out
            items += out[key]
            pages += 1
            cursor = out.get("cursor")
            if not cursor:
                return items, pages

    def close(self):
        self.conn.close()
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(10) == 0
        self.proc.stdin.close()
        self.proc.stdout.close()


def entry_id(item):
    return item["reason"]["uri"] if "reason" in item else item["post"]["uri"]


class FakeBlueskyTests(unittest.TestCase):
    def setUp(self):
        self.server = Server("--posts", "250")
        self.addCleanup(self.server.close)

    def test_sessions_carry_an_expiry_and_refresh_tokens_rotate(self):
        session = self.server.login()
        payload = json.loads(base64.urlsafe_b64decode(session["accessJwt"].split(".")[1] + "=="))
        self.assertGreater(payload["exp"], time.time() + 3600)
        self.assertEqual(payload["sub"], session["did"])
        status, _, renewed = self.server.call("POST", "/xrpc/com.atproto.server.refreshSession", token=session["refreshJwt"])
        self.assertEqual(status, 200)
        status, _, out = self.server.call("POST", "/xrpc/com.atproto.server.refreshSession", token=session["refreshJwt"])
        self.assertEqual((status, out["error"]), (400, "InvalidToken"), "a used refresh token is revoked")
        status, _, out = self.server.call("POST", "/xrpc/com.atproto.server.createSession", {"identifier": "me.test", "password": "no"})
        self.assertEqual(status, 401)
        self.server.call("POST", "/_control/expire-tokens")
        status, _, out = self.server.call("GET", "/xrpc/app.bsky.feed.getTimeline", token=renewed["accessJwt"])
        self.assertEqual((status, out["error"]), (400, "ExpiredToken"))
        _, _, stats = self.server.call("GET", "/_control/stats")
        self.assertEqual((stats["logins"], stats["refreshes"]), (2, 2))

    def test_the_timeline_pages_without_gaps_while_posts_arrive(self):
        token = self.server.login()["accessJwt"]
        _, _, first = self.server.call("GET", "/xrpc/app.bsky.feed.getTimeline?limit=100", token=token)
        self.server.call("POST", "/_control/post?count=30")
        rest, _ = self.server.walk(token, query=f"&cursor={quote(first['cursor'])}")
        _, _, control = self.server.call("GET", "/_control/timeline")
        ids = [entry_id(i) for i in first["feed"] + rest]
        self.assertEqual(ids, control["ids"][30:], "the cursor holds its place when new posts arrive on top")
        self.assertEqual(len(ids), 250)

    def test_reposts_of_old_posts_arrive_on_top_with_their_reason(self):
        token = self.server.login()["accessJwt"]
        _, _, control = self.server.call("GET", "/_control/timeline")
        old = [i for i in control["ids"] if "/app.bsky.feed.post/" in i][-1]
        self.server.call("POST", f"/_control/repost?uri={quote(old)}")
        _, _, page = self.server.call("GET", "/xrpc/app.bsky.feed.getTimeline?limit=1", token=token)
        item = page["feed"][0]
        self.assertEqual(item["post"]["uri"], old)
        self.assertEqual(item["reason"]["$type"], "app.bsky.feed.defs#reasonRepost")
        self.assertGreater(item["reason"]["indexedAt"], item["post"]["indexedAt"])

    def test_facets_are_utf8_byte_ranges(self):
        items, _ = self.server.walk(self.server.login()["accessJwt"])
        checked = 0
        for item in items:
            record = item["post"]["record"]
            text = record["text"].encode()
            for facet in record.get("facets", []):
                piece = text[facet["index"]["byteStart"]:facet["index"]["byteEnd"]].decode()
                feature = facet["features"][0]
                if feature["$type"].endswith("#tag"):
                    self.assertEqual(piece, "#" + feature["tag"])
                checked += 1
        self.assertGreater(checked, 50)

    def test_the_six_methods_and_their_errors(self):
        token = self.server.login()["accessJwt"]
        for method, query, key in [("app.bsky.feed.getAuthorFeed", "&actor=ada.bsky.social&filter=posts_no_replies", "feed"),
                                   ("app.bsky.feed.getFeed", "&feed=" + quote("at://did:plc:feedmaker00000000000000/app.bsky.feed.generator/cats"), "feed"),
                                   ("app.bsky.feed.getListFeed", "&list=" + quote("at://did:plc:ownerowner0000000000000/app.bsky.graph.list/3kfriends0001"), "feed"),
                                   ("app.bsky.feed.getActorLikes", "&actor=did:plc:ownerowner0000000000000", "feed"),
                                   ("app.bsky.feed.searchPosts", "&q=coffee&sort=latest", "posts")]:
            items, _ = self.server.walk(token, method, query, key)
            self.assertGreater(len(items), 0, method)
        status, _, out = self.server.call("GET", "/xrpc/app.bsky.feed.getFeed?feed=at%3A%2F%2Fx", token=token)
        self.assertEqual((status, out["error"]), (400, "UnknownFeed"))
        status, _, out = self.server.call("GET", "/xrpc/app.bsky.feed.getTimeline?limit=101", token=token)
        self.assertEqual(status, 400)

    def test_a_spent_quota_answers_429_with_the_reset_as_a_unix_time(self):
        token = self.server.login()["accessJwt"]
        self.server.call("POST", "/_control/rate-limit", {"limit": 2, "window": 30})
        for remaining in ("1", "0"):
            status, resp, _ = self.server.call("GET", "/xrpc/app.bsky.feed.getTimeline", token=token)
            self.assertEqual((status, resp.getheader("RateLimit-Remaining")), (200, remaining))
        status, resp, out = self.server.call("GET", "/xrpc/app.bsky.feed.getTimeline", token=token)
        self.assertEqual((status, out["error"]), (429, "RateLimitExceeded"))
        # The window opened at the first call, before now: it resets within 30 s from now.
        reset = int(resp.getheader("RateLimit-Reset"))
        self.assertTrue(time.time() - 1 <= reset <= time.time() + 31, reset)
        self.assertEqual(resp.getheader("RateLimit-Policy"), "2;w=30")


if __name__ == "__main__":
    unittest.main()
