#!/usr/bin/env python3
"""Self-check for the reference server: python3 Fixtures/reference-api/test_server.py"""
import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "server.py")


class Server:
    def __init__(self, *args):
        self.proc = subprocess.Popen([sys.executable, SERVER, "--port", "0", *args], stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        assert line.startswith("listening on 127.0.0.1:"), line
        self.port = int(line.rsplit(":", 1)[1])
        self.conn = self.connect()

    def connect(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)

    def request(self, method, path, body=None, headers=None, conn=None):
        """(status, headers, raw body) over one keep-alive connection."""
        conn = conn or self.conn
        data = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
        conn.request(method, path, body=data, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp, resp.read()

    def json(self, method, path, body=None, headers=None):
        status, _, raw = self.request(method, path, body, headers)
        return status, json.loads(raw)

    def login(self):
        status, out = self.json("POST", "/v1/auth/login", {"username": "demo", "password": "demo"})
        assert status == 200, out
        return {"Authorization": "Bearer " + out["access_token"]}

    def walk(self, auth, cursor=None, limit=None):
        """Every page from cursor until has_more is false: (list of changes, final cursor, page count)."""
        changes, pages = [], 0
        while True:
            query = "&".join(f"{k}={v}" for k, v in (("cursor", cursor), ("limit", limit)) if v is not None)
            status, resp, raw = self.request("GET", "/v1/feed?" + query, headers=auth)
            assert status == 200, raw
            page = json.loads(raw)
            assert resp.getheader("ETag") == f'"v{page["next_cursor"]}"'
            changes += page["changes"]
            cursor, pages = page["next_cursor"], pages + 1
            if not page["has_more"]:
                return changes, cursor, pages

    def close(self):
        self.conn.close()
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(10) == 0
        self.proc.stdout.close()


class ReferenceServerTests(unittest.TestCase):
    def setUp(self):
        self.s = Server("--posts", "300", "--page-size", "50", "--seed", "7")
        self.auth = self.s.login()

    def tearDown(self):
        self.s.close()

    def error_code(self, method, path, body=None, headers=None):
        status, resp, raw = self.s.request(method, path, body, headers)
        self.assertEqual(resp.getheader("Content-Type"), "application/json")
        return status, json.loads(raw)["error"]["code"]

    def test_auth(self):
        self.assertEqual(self.error_code("POST", "/v1/auth/login", {"username": "demo", "password": "x"}),
                         (401, "invalid_credentials"))
        self.assertEqual(self.error_code("POST", "/v1/auth/login", b"{nope"), (400, "bad_request"))
        status, first = self.s.json("POST", "/v1/auth/login", {"username": "demo", "password": "demo"})
        self.assertEqual((status, first["token_type"], first["expires_in"]), (200, "Bearer", 900))
        status, second = self.s.json("POST", "/v1/auth/refresh", {"refresh_token": first["refresh_token"]})
        self.assertEqual(status, 200)
        self.assertNotEqual(second["access_token"], first["access_token"])
        self.assertEqual(self.error_code("POST", "/v1/auth/refresh", {"refresh_token": first["refresh_token"]}),
                         (401, "invalid_refresh_token"))
        self.assertEqual(self.s.request("GET", "/v1/feed", headers={"Authorization": "Bearer " + second["access_token"]})[0], 200)
        self.assertEqual(self.error_code("GET", "/v1/feed"), (401, "unauthorized"))
        self.assertEqual(self.error_code("GET", "/v1/feed", headers={"Authorization": "Bearer nope"}), (401, "unauthorized"))
        self.assertEqual(self.error_code("GET", "/v1/nothing", headers=self.auth), (404, "not_found"))
        self.assertEqual(self.error_code("GET", "/elsewhere"), (404, "not_found"))
        self.assertEqual(self.error_code("GET", "/v1/auth/login")[0], 405)

    def test_walk_and_conditional_poll(self):
        changes, head, pages = self.s.walk(self.auth)
        self.assertEqual((len(changes), head, pages), (300, "300", 6))       # default limit = --page-size
        self.assertEqual([c["post"]["id"] for c in changes], [f"p{i:07d}" for i in range(1, 301)])
        posts = [c["post"] for c in changes]
        self.assertTrue(any(p["edited_at"] and p["text"].endswith(" (edited)") for p in posts))
        self.assertTrue(any(p["reply_to"] for p in posts) and any(p["video_ids"] for p in posts))
        self.assertEqual(self.s.walk(self.auth, limit=1000)[2], 1)
        status, resp, raw = self.s.request("GET", "/v1/feed?cursor=300", headers={**self.auth, "If-None-Match": '"v300"'})
        self.assertEqual((status, raw, resp.getheader("ETag")), (304, b"", '"v300"'))
        status, _, raw = self.s.request("GET", "/v1/feed?cursor=300", headers={**self.auth, "If-None-Match": '"v299"'})
        self.assertEqual((status, json.loads(raw)), (200, {"changes": [], "next_cursor": "300", "has_more": False}))
        self.assertEqual(self.error_code("GET", "/v1/feed?cursor=300", headers={"If-None-Match": '"v300"'}),
                         (401, "unauthorized"))
        for cursor in ("abc", "-1", "01", "301", "", "1.5"):
            self.assertEqual(self.error_code("GET", f"/v1/feed?cursor={cursor}", headers=self.auth), (400, "bad_cursor"))
        for limit in ("0", "1001", "x", ""):
            self.assertEqual(self.error_code("GET", f"/v1/feed?limit={limit}", headers=self.auth), (400, "bad_limit"))

    def test_changes_move_to_head(self):
        self.assertEqual(self.s.json("POST", "/_control/append?count=5"), (200, {"appended": 5, "posts": 305, "head": 305}))
        self.assertEqual(self.s.json("POST", "/_control/edit?id=p0000010"), (200, {"edited": "p0000010", "head": 306}))
        self.assertEqual(self.s.json("POST", "/_control/delete?id=p0000020"), (200, {"deleted": "p0000020", "head": 307}))
        self.assertEqual(self.s.json("POST", "/_control/edit?id=p0000010")[1]["head"], 308)
        for path in ("/_control/edit?id=p0000020", "/_control/delete?id=p0000020", "/_control/edit?id=p0009999",
                     "/_control/edit?id=p10", "/_control/delete"):
            self.assertEqual(self.error_code("POST", path), (404, "not_found"))
        changes, head, _ = self.s.walk(self.auth, cursor="300", limit=2)
        self.assertEqual(head, "308")
        self.assertEqual([c.get("id") or c["post"]["id"] for c in changes],
                         ["p0000301", "p0000302", "p0000303", "p0000304", "p0000305", "p0000020", "p0000010"])
        tomb, edited = changes[-2], changes[-1]["post"]
        self.assertEqual(set(tomb), {"op", "id", "deleted_at"})
        self.assertTrue(edited["text"].endswith(" [edit 1] [edit 2]"))
        self.assertGreater(edited["edited_at"], edited["created_at"])
        everything, _, _ = self.s.walk(self.auth, limit=100)
        ids = [c.get("id") or c["post"]["id"] for c in everything]
        self.assertEqual(len(ids), len(set(ids)))                 # each post once, at its latest change
        self.assertEqual((len(ids), ids[-2:]), (305, ["p0000020", "p0000010"]))
        snapshot = self.s.json("GET", "/_control/snapshot")[1]["posts"]
        self.assertEqual(len(snapshot), 304)
        self.assertNotIn("p0000020", [p["id"] for p in snapshot])
        self.assertEqual(next(p for p in snapshot if p["id"] == "p0000010")["text"], edited["text"])
        self.assertEqual(set(snapshot[0]), {"id", "author_id", "text", "created_at", "edited_at", "reply_to", "video_ids"})

    def test_stats(self):
        self.s.request("POST", "/_control/reset-stats")
        self.s.request("GET", "/v1/feed", headers=self.auth)
        self.s.request("GET", "/v1/feed?cursor=300", headers={**self.auth, "If-None-Match": '"v300"'})
        self.s.request("GET", "/v1/feed")
        self.s.request("POST", "/v1/auth/login", {"username": "demo", "password": "demo"})
        stats = self.s.json("GET", "/_control/stats")[1]
        self.assertEqual(stats, {"posts": 300, "head": 300, "total_requests": 4, "requests": {
            "GET /v1/feed": {"200": 1, "304": 1, "401": 1}, "POST /v1/auth/login": {"200": 1}}})

    def test_hold(self):
        self.assertEqual(self.s.json("POST", "/_control/hold?after=2")[1], {"holding": True, "passed": 0, "held": 0})
        for _ in range(2):
            self.assertEqual(self.s.request("GET", "/v1/feed?limit=1", headers=self.auth)[0], 200)
        # The third page waits on a connection of its own until released.
        waiting = self.s.connect()
        waiting.request("GET", "/v1/feed?limit=1", headers=self.auth)
        deadline = time.monotonic() + 60
        while self.s.json("GET", "/_control/hold")[1]["held"] != 1:
            self.assertLess(time.monotonic(), deadline, "the third page was not held")
            time.sleep(0.02)
        self.assertEqual(self.s.json("GET", "/_control/hold")[1], {"holding": True, "passed": 2, "held": 1})
        self.assertEqual(self.s.json("GET", "/_control/stats")[1]["requests"]["GET /v1/feed"], {"200": 2})
        self.assertEqual(self.s.json("POST", "/_control/release")[1], {"released": True})
        self.assertEqual(waiting.getresponse().status, 200)
        waiting.close()
        self.assertEqual(self.s.json("GET", "/_control/hold")[1], {"holding": False, "passed": 0, "held": 0})
        self.assertEqual(self.error_code("POST", "/_control/hold?after=x"), (400, "bad_request"))

    def test_faults(self):
        self.assertEqual(self.s.json("GET", "/_control/faults")[1]["faults"]["error_rate"], 0.0)
        self.assertEqual(self.error_code("POST", "/_control/faults", {"error_rate": 2}), (400, "bad_request"))
        self.s.request("POST", "/_control/faults", {"rate_limit_every": 3, "retry_after": 2})
        statuses = [self.s.request("GET", "/v1/feed?limit=1", headers=self.auth)[:2] for _ in range(6)]
        self.assertEqual([s for s, _ in statuses], [200, 200, 429, 200, 200, 429])
        self.assertEqual(statuses[2][1].getheader("Retry-After"), "2")

        def run(settings, n=20):
            self.s.request("POST", "/_control/faults", settings)
            return [self.s.request("GET", "/v1/feed?limit=1", headers=self.auth)[0] for _ in range(n)]
        first = run({"error_rate": 0.5, "error_status": 502})
        self.assertEqual(set(first), {200, 502})
        self.assertEqual(run({"error_rate": 0.5, "error_status": 502}), first)     # reproducible
        self.s.request("POST", "/_control/faults", {"malformed_rate": 1})
        status, _, raw = self.s.request("GET", "/v1/feed", headers=self.auth)
        self.assertEqual(status, 200)
        self.assertRaises(ValueError, json.loads, raw)
        self.s.request("POST", "/_control/faults", {"truncate_rate": 1})
        with self.assertRaises(http.client.IncompleteRead):
            self.s.request("GET", "/v1/feed", headers=self.auth)
        self.s.conn.close()
        self.s.request("POST", "/_control/faults", {"reset_rate": 1, "latency_ms": 20})
        started = time.monotonic()
        with self.assertRaises((ConnectionError, http.client.RemoteDisconnected)):
            self.s.request("GET", "/v1/feed", headers=self.auth)
        self.assertGreaterEqual(time.monotonic() - started, 0.02)
        self.s.conn.close()
        self.assertEqual(self.s.json("POST", "/_control/faults", {})[1]["faults"]["reset_rate"], 0.0)
        self.assertEqual(self.s.request("GET", "/v1/feed", headers=self.auth)[0], 200)
        requests = self.s.json("GET", "/_control/stats")[1]["requests"]["GET /v1/feed"]
        self.assertEqual((requests["reset"], requests["429"]), (1, 2))


class DeterminismAndDumpTests(unittest.TestCase):
    def test_appends_continue_the_generator(self):
        a, b = Server("--posts", "100"), Server("--posts", "150")
        try:
            a.request("POST", "/_control/append?count=50")
            pages = [s.request("GET", "/v1/feed?cursor=90&limit=60", headers=s.login())[2] for s in (a, b)]
            self.assertEqual(pages[0], pages[1])
        finally:
            a.close()
            b.close()

    def test_token_expiry(self):
        s = Server("--posts", "10", "--token-ttl", "1")
        try:
            auth = s.login()
            time.sleep(1.1)
            status, _, raw = s.request("GET", "/v1/feed", headers=auth)
            self.assertEqual((status, json.loads(raw)["error"]["code"]), (401, "token_expired"))
        finally:
            s.close()

    def test_dump_matches_live_server(self):
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([sys.executable, SERVER, "--posts", "120", "--page-size", "50", "--dump", out], check=True)
            def read(name):
                with open(os.path.join(out, name), "rb") as f:
                    return f.read()
            index = json.loads(read("index.json"))["responses"]
            self.assertEqual([r["request"] for r in index[:3]], [
                "POST /v1/auth/login", "POST /v1/auth/refresh", "GET /v1/feed?limit=50"])
            self.assertEqual(json.loads(read("login.json"))["access_token"], "demo-access-token")
            bodies = [read(r["body"]) for r in index[2:]]
            pages = [json.loads(b) for b in bodies]
            for entry, previous in zip(index[3:], pages):     # each request continues from the last page
                self.assertEqual(entry["request"], f"GET /v1/feed?cursor={previous['next_cursor']}&limit=50")
            self.assertEqual([p["has_more"] for p in pages], [True, True, False, False])
            self.assertEqual((pages[-1]["changes"], pages[-1]["next_cursor"]), ([], "125"))
            self.assertEqual(index[-1]["headers"]["ETag"], '"v125"')
            tail = [c for p in pages for c in p["changes"]][-5:]
            edits = [c["post"]["id"] for c in tail if c["op"] == "upsert"]
            deletes = [c["id"] for c in tail if c["op"] == "delete"]
            self.assertEqual((len(edits), len(deletes)), (3, 2))
            live = Server("--posts", "120", "--page-size", "50")
            try:
                for i in edits:
                    live.request("POST", f"/_control/edit?id={i}")
                for i in deletes:
                    live.request("POST", f"/_control/delete?id={i}")
                auth = live.login()
                for entry, body in zip(index[2:], bodies):
                    self.assertEqual(live.request("GET", entry["request"].split(" ", 1)[1], headers=auth)[2], body)
            finally:
                live.close()


class AvatarsHereTests(unittest.TestCase):
    """--avatars-here: avatars on the server itself, behind the token or redirected to another origin."""

    def test_avatars_behind_the_token_and_a_redirect_away(self):
        s = Server("--posts", "40", "--avatars-here")
        try:
            auth = s.login()
            changes, _, _ = s.walk(auth)
            base = f"http://127.0.0.1:{s.port}/v1/avatars/"
            avatars = {c["post"]["author"]["avatar_url"] for c in changes}
            self.assertTrue(all(a.startswith(base) for a in avatars), avatars)
            here = sorted(a for a in avatars if "/away-" not in a)
            away = sorted(a for a in avatars if "/away-" in a)
            self.assertTrue(here and away, avatars)
            path = here[0][len(f"http://127.0.0.1:{s.port}"):]
            self.assertEqual(s.request("GET", path)[0], 401)
            status, resp, raw = s.request("GET", path, headers=auth)
            self.assertEqual((status, resp.getheader("Content-Type"), len(raw)), (200, "image/png", 1024))
            status, resp, _ = s.request("GET", away[0][len(f"http://127.0.0.1:{s.port}"):], headers=auth)
            name = away[0].rsplit("/away-", 1)[1]
            self.assertEqual((status, resp.getheader("Location")), (302, f"http://localhost:{s.port}/avatars/{name}"))
            status, _, raw = s.request("GET", f"/avatars/{name}", headers={"Host": f"localhost:{s.port}"})
            self.assertEqual((status, len(raw)), (200, 1024))
            status, out = s.json("GET", "/_control/avatars")
            self.assertEqual([(r["host"].split(":")[0], r["authorization"]) for r in out["requests"]],
                             [("127.0.0.1", False), ("127.0.0.1", True), ("127.0.0.1", True), ("localhost", False)])
        finally:
            s.close()


if __name__ == "__main__":
    unittest.main()
