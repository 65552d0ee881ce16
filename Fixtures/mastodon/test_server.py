#!/usr/bin/env python3
"""Self-check for the fake Mastodon server: python3 Fixtures/mastodon/test_server.py"""
import calendar
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
import unittest
from urllib.parse import parse_qs, urlsplit

SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "server.py")
AUTH = {"Authorization": "Bearer test-token"}
LINK = re.compile(r'<([^>]+)>; rel="(next|prev)"')


class Server:
    def __init__(self, *args):
        self.proc = subprocess.Popen([sys.executable, SERVER, "--port", "0", "--exit-on-stdin-eof", *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        assert line.startswith("listening on 127.0.0.1:"), line
        self.port = int(line.rsplit(":", 1)[1])
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)

    def request(self, method, path, body=None, headers=None):
        """(status, response, raw body) over one keep-alive connection."""
        data = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
        self.conn.request(method, path, body=data, headers=headers or {})
        resp = self.conn.getresponse()
        return resp.status, resp, resp.read()

    def json(self, method, path, body=None, headers=None):
        status, _, raw = self.request(method, path, body, headers)
        return status, json.loads(raw)

    def get(self, url):
        """GET an absolute Link URL or a path with the test token: (statuses, {rel: url})."""
        parts = urlsplit(url)
        if parts.netloc:
            assert parts.netloc == f"127.0.0.1:{self.port}", url
        status, resp, raw = self.request("GET", parts.path + ("?" + parts.query if parts.query else ""), headers=AUTH)
        assert status == 200, (status, raw)
        links = {rel: u for u, rel in LINK.findall(resp.getheader("Link") or "")}
        return json.loads(raw), links

    def control_ids(self, name):
        status, out = self.json("GET", f"/_control/timeline?name={name}")
        assert status == 200, out
        return out

    def close(self):
        self.conn.close()
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(10) == 0
        self.proc.stdin.close()
        self.proc.stdout.close()


def walk_back(server, path, by_status_id=True):
    """Follow rel=next from `path` until an empty page; returns every status, newest first.

    Bookmarks and favourites are ordered by their records' ids, not by status id (by_status_id=False).
    """
    out, url, pages = [], path, 0
    while True:
        statuses, links = server.get(url)
        pages += 1
        if not statuses:
            assert links == {}, links            # an empty page has no Link header
            return out, pages
        ids = [int(s["id"]) for s in statuses]
        assert not by_status_id or ids == sorted(ids, reverse=True), "pages are newest first"
        out += statuses
        url = links["next"]


class MastodonServerTests(unittest.TestCase):
    def setUp(self):
        self.s = Server("--statuses", "200", "--seed", "3")

    def tearDown(self):
        self.s.close()

    def test_auth(self):
        for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "test-token"}):
            status, resp, raw = self.s.request("GET", "/api/v1/timelines/home", headers=headers)
            self.assertEqual((status, json.loads(raw)), (401, {"error": "The access token is invalid"}))
            self.assertEqual(resp.getheader("X-RateLimit-Limit"), "300")
            self.assertIsNotNone(resp.getheader("X-RateLimit-Reset"))
        self.assertEqual(self.s.json("GET", "/api/v1/accounts/verify_credentials", headers=AUTH)[1]["acct"], "ada")
        # Control endpoints need no token.
        self.assertEqual(self.s.request("GET", "/_control/stats")[0], 200)

    def test_link_walk_covers_home(self):
        expected = self.s.control_ids("home")["ids"]
        self.assertEqual(len(expected), 200)
        statuses, pages = walk_back(self.s, "/api/v1/timelines/home?limit=7")
        self.assertEqual([s["id"] for s in statuses], expected)
        self.assertEqual(pages, 30)                         # 29 pages of up to 7, then the empty page
        first, links = self.s.get("/api/v1/timelines/home?limit=7")
        self.assertEqual(parse_qs(urlsplit(links["next"]).query), {"limit": ["7"], "max_id": [first[-1]["id"]]})
        self.assertEqual(parse_qs(urlsplit(links["prev"]).query), {"limit": ["7"], "min_id": [first[0]["id"]]})
        self.assertEqual(len(self.s.get("/api/v1/timelines/home")[0]), 20)            # default limit
        self.assertEqual(len(self.s.get("/api/v1/timelines/home?limit=500")[0]), 40)  # clamped
        # The data has the documented mix.
        reblogs = [s for s in statuses if s["reblog"]]
        self.assertTrue(reblogs and all(s["content"] == "" and int(s["reblog"]["id"]) < int(s["id"])
                                        and s["reblog"]["account"]["id"] != s["account"]["id"] for s in reblogs))
        self.assertFalse({s["reblog"]["id"] for s in reblogs} & set(expected))
        self.assertTrue(any(s["in_reply_to_id"] for s in statuses) and any(s["spoiler_text"] for s in statuses))
        self.assertTrue(any(s["edited_at"] for s in statuses))
        kinds = {m["type"] for s in statuses for m in (s["reblog"] or s)["media_attachments"]}
        self.assertLessEqual({"image", "video", "gifv"}, kinds)
        # list 1 = every 3rd status; tag timelines; account timelines
        self.assertEqual(walk_back(self.s, "/api/v1/timelines/list/1?limit=40")[0],
                         [s for s in statuses[::-1][2::3]][::-1])
        tagged = [s["id"] for s in walk_back(self.s, "/api/v1/timelines/tag/Swift?limit=40")[0]]
        self.assertTrue(tagged)
        self.assertEqual(tagged, self.s.control_ids("tag:swift")["ids"])
        for sid in tagged:
            status = self.s.json("GET", f"/_control/status?id={sid}")[1]
            self.assertIn("swift", [t["name"] for t in status["tags"]])
            self.assertIn('class="mention hashtag"', status["content"])

    def test_min_id_forward_and_since_id(self):
        head = self.s.control_ids("home")["ids"][0]
        status, posted = self.s.json("POST", "/_control/post?count=25")
        self.assertEqual((status, len(posted["ids"])), (200, 25))
        self.assertTrue(all(int(i) > int(head) for i in posted["ids"]))
        # min_id gives the statuses right after the cursor (oldest first in time), each page newest-first;
        # following rel=prev walks forward until an empty page.
        collected, url = [], f"/api/v1/timelines/home?limit=10&min_id={head}"
        pages = []
        while True:
            statuses, links = self.s.get(url)
            if not statuses:
                self.assertEqual(links, {})
                break
            pages.append([s["id"] for s in statuses])
            collected = [s["id"] for s in statuses] + collected
            url = links["prev"]
        self.assertEqual(collected, posted["ids"])
        self.assertEqual(pages[0], posted["ids"][-10:])             # the 10 immediately after head
        self.assertEqual([len(p) for p in pages], [10, 10, 5])
        # since_id gives the newest `limit` above the cursor instead.
        newest = self.s.get(f"/api/v1/timelines/home?limit=10&since_id={head}")[0]
        self.assertEqual([s["id"] for s in newest], posted["ids"][:10])
        # max_id and min_id together bound the page on both sides.
        between = self.s.get(f"/api/v1/timelines/home?min_id={posted['ids'][20]}&max_id={posted['ids'][10]}")[0]
        self.assertEqual([s["id"] for s in between], posted["ids"][11:20])

    def test_edit_does_not_move_and_delete_removes(self):
        ids = self.s.control_ids("home")["ids"]
        plain = next(i for i in ids[50:] if not self.s.json("GET", f"/_control/status?id={i}")[1]["reblog"])
        before = self.s.json("GET", f"/_control/status?id={plain}")[1]
        status, out = self.s.json("POST", f"/_control/edit?id={plain}")
        self.assertEqual(status, 200)
        after = self.s.json("GET", f"/_control/status?id={plain}")[1]
        self.assertNotEqual(after["content"], before["content"])
        self.assertEqual((after["edited_at"], after["id"]), (out["edited_at"], plain))
        self.assertGreater(after["edited_at"], after["created_at"])
        self.assertEqual(self.s.control_ids("home")["ids"], ids)          # not moved
        self.assertEqual(self.s.json("POST", f"/_control/delete?id={plain}")[0], 200)
        self.assertNotIn(plain, self.s.control_ids("home")["ids"])
        self.assertEqual(self.s.json("GET", f"/_control/status?id={plain}")[0], 404)
        self.assertEqual(self.s.json("POST", f"/_control/delete?id={plain}")[0], 404)

    def test_bookmark_pagination_uses_record_ids(self):
        status_ids = set(self.s.control_ids("home")["ids"])
        old = sorted(status_ids, key=int)[3]
        status, out = self.s.json("POST", f"/_control/bookmark?id={old}")
        self.assertEqual((status, out["created"]), (200, True))
        expected = self.s.control_ids("bookmarks")
        self.assertEqual(expected["ids"][0], old)          # newest bookmark first, although an old status
        cursors, url = [], "/api/v1/bookmarks?limit=4"
        seen = []
        while True:
            statuses, links = self.s.get(url)
            if not statuses:
                break
            self.assertTrue(all(s["bookmarked"] for s in statuses))
            seen += [s["id"] for s in statuses]
            cursors += [parse_qs(urlsplit(links["next"]).query)["max_id"][0],
                        parse_qs(urlsplit(links["prev"]).query)["min_id"][0]]
            url = links["next"]
        self.assertEqual(seen, expected["ids"])
        self.assertTrue(set(cursors) <= set(expected["record_ids"]))
        self.assertFalse(set(cursors) & (status_ids | set(seen)))
        # Favourites work the same way, with their own sequence.
        self.assertEqual(self.s.json("POST", f"/_control/favourite?id={old}")[0], 200)
        favs = self.s.control_ids("favourites")
        self.assertEqual(favs["ids"][0], old)
        self.assertEqual([s["id"] for s in walk_back(self.s, "/api/v1/favourites?limit=40", False)[0]], favs["ids"])

    def test_rate_limit(self):
        status, out = self.s.json("POST", "/_control/rate-limit", {"limit": 3, "window": 60})
        self.assertEqual(status, 200)
        remaining = []
        for _ in range(3):
            status, resp, _ = self.s.request("GET", "/api/v1/timelines/home?limit=1", headers=AUTH)
            self.assertEqual(status, 200)
            remaining.append(resp.getheader("X-RateLimit-Remaining"))
        self.assertEqual(remaining, ["2", "1", "0"])
        for _ in range(2):
            status, resp, raw = self.s.request("GET", "/api/v1/timelines/home", headers=AUTH)
            self.assertEqual((status, json.loads(raw)), (429, {"error": "Too many requests"}))
            self.assertIsNone(resp.getheader("Retry-After"))
            self.assertEqual((resp.getheader("X-RateLimit-Limit"), resp.getheader("X-RateLimit-Remaining")), ("3", "0"))
            reset = resp.getheader("X-RateLimit-Reset")
            self.assertRegex(reset, r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
            self.assertEqual(reset, out["reset"])
            at = calendar.timegm(time.strptime(reset[:19], "%Y-%m-%dT%H:%M:%S")) + float(reset[19:-1])
            self.assertTrue(0 < at - time.time() <= 60)
        # A short window: after the reset time the quota is back.
        self.s.json("POST", "/_control/rate-limit", {"limit": 1, "window": 0.3})
        self.assertEqual(self.s.request("GET", "/api/v1/timelines/home", headers=AUTH)[0], 200)
        self.assertEqual(self.s.request("GET", "/api/v1/timelines/home", headers=AUTH)[0], 429)
        time.sleep(0.4)
        self.assertEqual(self.s.request("GET", "/api/v1/timelines/home", headers=AUTH)[0], 200)
        stats = self.s.json("GET", "/_control/stats")[1]
        self.assertEqual(stats["requests"]["GET /api/v1/timelines/home"], {"200": 5, "429": 3})

    def test_lookup_and_not_found(self):
        for acct in ("ada", "@ada", "ada@mastodon.example", "ADA"):
            self.assertEqual(self.s.json("GET", f"/api/v1/accounts/lookup?acct={acct}", headers=AUTH)[1]["acct"], "ada")
        bob = self.s.json("GET", "/api/v1/accounts/lookup?acct=bob@example.social", headers=AUTH)[1]
        self.assertEqual((bob["username"], bob["url"]), ("bob", "https://example.social/@bob"))
        for path in ("/api/v1/accounts/lookup?acct=nobody", "/api/v1/accounts/lookup",
                     "/api/v1/timelines/list/2", "/api/v1/accounts/999/statuses", "/api/v1/timelines/tag/nosuchtag"):
            self.assertEqual(self.s.json("GET", path, headers=AUTH), (404, {"error": "Record not found"}), path)
        statuses, _ = walk_back(self.s, f"/api/v1/accounts/{bob['id']}/statuses?limit=40")
        self.assertTrue(statuses and all(s["account"]["id"] == bob["id"] for s in statuses))
        self.assertEqual([s["id"] for s in statuses], self.s.control_ids(f"account:{bob['id']}")["ids"])


class DeterminismTests(unittest.TestCase):
    def test_posting_continues_the_generator(self):
        a, b = Server("--statuses", "50"), Server("--statuses", "80")
        try:
            a.request("POST", "/_control/post?count=30")
            self.assertEqual(a.control_ids("home"), b.control_ids("home"))
            pages = [json.loads(s.request("GET", "/api/v1/timelines/home?limit=40", headers=AUTH)[2]) for s in (a, b)]
            for page in pages:          # seeded bookmarks/favourites are drawn from the initial statuses only
                for status in page + [p["reblog"] for p in page if p["reblog"]]:
                    status.pop("bookmarked"), status.pop("favourited")
            self.assertEqual(pages[0], pages[1])
        finally:
            a.close()
            b.close()


class StreamingTests(unittest.TestCase):
    """The streaming API as docs.joinmastodon.org/methods/streaming describes it."""

    def setUp(self):
        self.s = Server("--statuses", "20", "--thump", "0.2")

    def tearDown(self):
        self.s.close()

    def open_stream(self, path="/api/v1/streaming/user", token="test-token"):
        import socket
        sock = socket.create_connection(("127.0.0.1", self.s.port), timeout=10)
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                     "Accept: text/event-stream\r\n\r\n".encode())
        return sock

    def read_until(self, sock, needle, limit=1 << 20):
        data = b""
        while needle not in data and len(data) < limit:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        return data

    def wait_open(self, n):
        for _ in range(100):
            if self.s.json("GET", "/_control/streams")[1]["open"] == n:
                return
            time.sleep(0.02)
        self.fail(f"expected {n} open streams")

    def test_instance_announces_the_streaming_url(self):
        status, v2 = self.s.json("GET", "/api/v2/instance", headers=AUTH)
        self.assertEqual(status, 200)
        self.assertEqual(v2["configuration"]["urls"]["streaming"], f"ws://127.0.0.1:{self.s.port}")
        status, v1 = self.s.json("GET", "/api/v1/instance", headers=AUTH)
        self.assertEqual(v1["urls"]["streaming_api"], f"ws://127.0.0.1:{self.s.port}")
        self.s.json("POST", "/_control/streaming", {"announce": "wss://streaming.example", "v2": False})
        self.assertEqual(self.s.request("GET", "/api/v2/instance", headers=AUTH)[0], 404)
        self.assertEqual(self.s.json("GET", "/api/v1/instance", headers=AUTH)[1]["urls"]["streaming_api"], "wss://streaming.example")

    def test_stream_frames_update_delete_edit_and_thumps(self):
        sock = self.open_stream()
        head = self.read_until(sock, b"\r\n\r\n")
        self.assertIn(b"200 OK", head)
        self.assertIn(b"Content-Type: text/event-stream", head)
        self.wait_open(1)
        self.assertIn(b":thump\n", self.read_until(sock, b":thump\n"))
        posted = self.s.json("POST", "/_control/post?count=1")[1]
        self.assertEqual(posted["streamed"], 1)
        sid = posted["ids"][0]
        data = self.read_until(sock, b"}\n\n")
        frame = re.search(rb"event: update\ndata: (\{.*\})\n\n", data, re.S)
        self.assertIsNotNone(frame, data[:300])
        self.assertEqual(json.loads(frame.group(1))["id"], sid)
        self.s.json("POST", f"/_control/edit?id={sid}")
        self.assertIn(b"event: status.update\ndata: {", self.read_until(sock, b"status.update"))
        self.s.json("POST", f"/_control/delete?id={sid}")
        self.assertIn(f"event: delete\ndata: {sid}\n\n".encode(), self.read_until(sock, f"data: {sid}\n\n".encode()))
        sock.close()

    def test_public_timelines_follow_visibility_and_locality(self):
        everyone, _ = self.s.get("/api/v1/timelines/public?limit=40")
        local, links = self.s.get("/api/v1/timelines/public?local=true&limit=40")
        self.assertTrue(local and len(local) <= len(everyone))
        for status in local:
            self.assertEqual(status["visibility"] if status["reblog"] is None else status["reblog"]["visibility"], "public")
            self.assertNotIn("@", status["account"]["acct"], "local authors only")
        self.assertIn("local=true", links["prev"])
        ids = self.s.control_ids("public:local")["ids"]
        self.assertEqual([s["id"] for s in local], ids[:len(local)])

    def test_hashtag_and_list_streams_and_auth(self):
        sock = self.open_stream(token="wrong")
        self.assertIn(b"401", self.read_until(sock, b"\r\n"))
        sock.close()
        sock = self.open_stream("/api/v1/streaming/nonsense")
        self.assertIn(b"404", self.read_until(sock, b"\r\n"))
        sock.close()
        tag = self.open_stream("/api/v1/streaming/hashtag?tag=nosuchtag")
        lst = self.open_stream("/api/v1/streaming/list?list=1")
        self.wait_open(2)
        posted = self.s.json("POST", "/_control/post?count=3")[1]
        self.assertGreaterEqual(posted["streamed"], 1, "every third status is on list 1")
        self.assertIn(b"event: update", self.read_until(lst, b"event: update"))
        tag.close()
        lst.close()

    def test_drop_closes_every_stream_and_refuse_answers_with_the_status(self):
        a, b = self.open_stream(), self.open_stream("/api/v1/streaming/public")
        self.wait_open(2)
        self.assertEqual(self.s.json("POST", "/_control/stream-drop")[1]["dropped"], 2)
        for sock in (a, b):
            data = self.read_until(sock, b"never")
            self.assertTrue(data.endswith(b"") and b"never" not in data)
            sock.close()
        self.wait_open(0)
        self.s.json("POST", "/_control/streaming", {"refuse": 503})
        sock = self.open_stream()
        self.assertIn(b"503", self.read_until(sock, b"\r\n"))
        sock.close()
        connects = self.s.json("GET", "/_control/streams")[1]["connects"]
        self.assertEqual([c["status"] for c in connects], [200, 200, 503])


if __name__ == "__main__":
    unittest.main()
