#!/usr/bin/env python3
"""Self-check for the hostile fixture server: python3 Fixtures/hostile/test_server.py

Starts server.py once per mode (on port 0, with the stdin-EOF convention), pokes each mode with
http.client or a raw socket (reading at most a few MB of the endless/huge/bomb bodies) and checks
what README.md promises. The last line is `N passed, M failed`; the exit status is 0 only when
nothing failed.
"""
import calendar
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request
import zlib
from urllib.parse import urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "server.py")
ENTITIES = os.path.join(HERE, "..", "mastodon", "entities")
ACCESS = "hostile-access-token-SECRET1"
REFRESH = "hostile-refresh-token-SECRET2"
AUTH = {"Authorization": f"Bearer {ACCESS}"}
MIB = 1 << 20
ESC = "\x1b"


class Failure(Exception):
    pass


def check(condition, message="check failed"):
    if not condition:
        raise Failure(message)


class Server:
    """server.py as a subprocess; leaving the `with` block closes its stdin, which stops it."""

    def __init__(self, mode, *args):
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, SERVER, "--port", "0", "--exit-on-stdin-eof", "--mode", mode,
                                      *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr)
        self.first_line = self.proc.stdout.readline().decode()
        m = re.fullmatch(r"listening on 127\.0\.0\.1:(\d+)\n", self.first_line)
        if not m:
            self.stop()
            raise Failure(f"first line was {self.first_line!r}")
        self.port = int(m.group(1))
        self.origin = f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise Failure("the server did not exit when its stdin closed")
        finally:
            self.proc.stdout.close()
            self.stderr.seek(0)
            noise = self.stderr.read()
            self.stderr.close()
        check(noise == b"", f"the server wrote to stderr: {noise[:2000]!r}")

    def conn(self, timeout=10):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, target, body=None, headers=None, limit=None, conn=None):
        """(status, headers {lower: value}, body bytes) without following redirects."""
        own = conn is None
        conn = conn or self.conn()
        try:
            data = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
            conn.request(method, target, body=data, headers=headers or {})
            resp = conn.getresponse()
            out = resp.read() if limit is None else resp.read(limit)
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, out
        finally:
            if own:
                conn.close()

    def get_json(self, target, headers=AUTH):
        status, hdrs, body = self.request("GET", target, headers=headers)
        check(status == 200, f"GET {target} answered {status}: {body[:300]!r}")
        return json.loads(body), hdrs

    def stats(self):
        status, _, body = self.request("GET", "/_control/stats")
        check(status == 200)
        return json.loads(body)

    def reset(self):
        status, _, body = self.request("POST", "/_control/reset")
        check(status == 200 and json.loads(body) == {"reset": True})


def raw_get(port, target, headers=AUTH, timeout=10):
    """GET over a raw socket (http.client refuses header lines over 64 KiB): (status, [(name, value)], socket, rest)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    lines = [f"GET {target} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    head_lines = head.decode("latin-1").split("\r\n")
    status = int(head_lines[0].split()[1])
    fields = [tuple(p.strip() for p in line.split(":", 1)) for line in head_lines[1:]]
    return status, fields, sock, rest


def links(value):
    """rel -> URL for a well-formed Link header."""
    return {rel: url for url, rel in re.findall(r'<([^>]*)>;\s*rel="([^"]*)"', value or "")}


def target_of(url):
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def walk_api(server, limit):
    ids, cursor, pages = [], None, 0
    while True:
        target = f"/v1/feed?limit={limit}" + (f"&cursor={cursor}" if cursor is not None else "")
        page, hdrs = server.get_json(target)
        check(hdrs.get("etag") == f'"v{page["next_cursor"]}"', f"ETag {hdrs.get('etag')}")
        ids += [c["post"]["id"] for c in page["changes"]]
        cursor, pages = page["next_cursor"], pages + 1
        check(pages < 100, "the walk does not end")
        if not page["has_more"]:
            return ids, cursor, pages


def walk_home(server, first):
    ids, target, pages = [], first, 0
    while True:
        statuses, hdrs = server.get_json(target)
        pages += 1
        check(pages < 100, "the walk does not end")
        if not statuses:
            check("link" not in hdrs, "an empty page has no Link")
            return ids, pages
        ids += [s["id"] for s in statuses]
        nxt = links(hdrs.get("link"))["next"]
        check(nxt.startswith(server.origin + "/api/v1/timelines/home?"), nxt)
        target = target_of(nxt)


def iso_seconds(stamp):
    m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{3})Z", stamp)
    check(m, f"not ISO 8601 with milliseconds: {stamp!r}")
    return calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")) + int(m.group(2)) / 1000


TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


# ---- tests -----------------------------------------------------------------------------------

@test
def startup_line_and_stdin_eof():
    server = Server("normal")
    check(server.first_line == f"listening on 127.0.0.1:{server.port}\n")
    server.proc.stdin.close()
    check(server.proc.wait(timeout=5) == 0, "exit status 0 on stdin EOF")
    server.stop()
    out = subprocess.run([sys.executable, SERVER, "--port", "0", "--mode", "link-other-port"],
                         stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    check(out.returncode == 2 and b"--target-port" in out.stderr, "link-other-port needs --target-port")


@test
def normal_httpapi():
    with Server("normal") as s:
        for path in ("/v1/auth/login", "/v1/auth/refresh"):
            status, _, body = s.request("POST", path, {"username": "anyone", "password": "anything"})
            check(status == 200, f"{path} {status}")
            check(json.loads(body) == {"access_token": ACCESS, "refresh_token": REFRESH, "token_type": "Bearer",
                                       "expires_in": 3600}, body)
        status, _, body = s.request("GET", "/v1/feed")
        check(status == 401 and json.loads(body)["error"]["code"] == "unauthorized", "no bearer: 401")
        ids, cursor, pages = walk_api(s, 7)
        check(ids == [f"p{i:07d}" for i in range(1, 31)], ids)
        check((cursor, pages) == ("30", 5), (cursor, pages))
        status, hdrs, body = s.request("GET", "/v1/feed?cursor=30&limit=7", headers={**AUTH, "If-None-Match": '"v30"'})
        check(status == 304 and body == b"" and hdrs.get("etag") == '"v30"', "idle poll: 304")
        page, _ = s.get_json("/v1/feed")
        check(len(page["changes"]) == 30 and page["has_more"] is False, "default limit covers 30 posts")
        post = page["changes"][0]["post"]
        check(set(post) == {"id", "author", "text", "created_at", "edited_at", "reply_to", "counts", "video_ids"})
        for target, code in (("/v1/feed?cursor=abc", "bad_cursor"), ("/v1/feed?cursor=31", "bad_cursor"),
                             ("/v1/feed?limit=0", "bad_limit"), ("/v1/feed?limit=1001", "bad_limit")):
            status, _, body = s.request("GET", target, headers=AUTH)
            check(status == 400 and json.loads(body)["error"]["code"] == code, target)
        status, _, _ = s.request("POST", "/v1/auth/login2", {})
        check(status == 404, "login2 exists only in redirect-post")
        # keep-alive: two answers over one connection
        conn = s.conn()
        for _ in range(2):
            status, hdrs, _ = s.request("GET", "/v1/feed?limit=1", headers=AUTH, conn=conn)
            check(status == 200 and hdrs.get("connection") != "close")
        conn.close()
        stats = s.stats()
        check(stats["requests"]["GET /v1/feed"] == 1 + 5 + 1 + 1 + 4 + 2, stats["requests"])
        check(stats["total_requests"] == sum(stats["requests"].values()))
        check(stats["authorization"].count(f"Bearer {ACCESS}") == 5 + 1 + 1 + 4 + 2, stats["authorization"])
        check(stats["statuses"]["GET /v1/feed"] == {"401": 1, "200": 8, "304": 1, "400": 4}, stats["statuses"])
        check(stats["recent"][-1] == {"request": "GET /v1/feed?limit=1", "status": 200}, stats["recent"][-1])
        s.reset()
        stats = s.stats()
        check(stats["total_requests"] == 0 and stats["requests"] == {} and stats["authorization"] == [], stats)


@test
def normal_mastodon():
    with Server("normal") as s:
        status, _, body = s.request("GET", "/api/v1/accounts/verify_credentials")
        check(status == 401 and json.loads(body) == {"error": "The access token is invalid"})
        account, _ = s.get_json("/api/v1/accounts/verify_credentials", headers={"Authorization": "Bearer whatever"})
        check(account["acct"] == "ada" and "source" in account and isinstance(account["id"], str))
        ids, pages = walk_home(s, "/api/v1/timelines/home?limit=7")
        check(len(ids) == 30 and len(set(ids)) == 30 and pages == 6, (len(ids), pages))
        check([int(i) for i in ids] == sorted((int(i) for i in ids), reverse=True), "newest first")
        check(all(len(i) == 18 for i in ids), "18-digit snowflake ids")
        statuses, hdrs = s.get_json("/api/v1/timelines/home?limit=7")
        check([x["id"] for x in statuses] == ids[:7], "deterministic ids")
        for name in ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"):
            check(name in hdrs, name)
        iso_seconds(hdrs["x-ratelimit-reset"])
        rel = links(hdrs["link"])
        check(rel["next"] == f"{s.origin}/api/v1/timelines/home?limit=7&max_id={ids[6]}", rel)
        check(rel["prev"] == f"{s.origin}/api/v1/timelines/home?limit=7&min_id={ids[0]}", rel)
        newer, hdrs = s.get_json(target_of(rel["prev"]))
        check(newer == [] and "link" not in hdrs, "nothing newer than the newest")
        oldest, hdrs = s.get_json("/api/v1/timelines/home?min_id=0&limit=5")
        check([x["id"] for x in oldest] == ids[-5:], "min_id=0 gives the oldest five, newest first")
        forward, _ = s.get_json(target_of(links(hdrs["link"])["prev"]))
        check([x["id"] for x in forward] == ids[-10:-5], "prev walks forward")
        status, _, body = s.request("GET", "/api/v1/timelines/home?max_id=abc", headers=AUTH)
        check(status == 400 and "numeric" in json.loads(body)["error"])
        with open(os.path.join(ENTITIES, "status_plain.json"), encoding="utf-8") as f:
            plain = json.load(f)
        with open(os.path.join(ENTITIES, "account.json"), encoding="utf-8") as f:
            account_entity = json.load(f)
        check(list(statuses[0]) == list(plain), "status keys as in entities/status_plain.json")
        check(list(statuses[0]["account"]) == list(account_entity), "account keys as in entities/account.json")
        status, _, body = s.request("GET", "/api/v1/nope", headers=AUTH)
        check(status == 404 and json.loads(body) == {"error": "Record not found"})
        status, _, body = s.request("GET", "/nope")
        check(status == 404 and json.loads(body)["error"]["code"] == "not_found")
        status, _, _ = s.request("GET", "/_control/nope")
        check(status == 404)
        check(s.stats()["requests"].get("GET /_control/stats") is None, "control requests are not counted")


@test
def catcher():
    with Server("catcher") as s:
        page, _ = s.get_json("/v1/feed?cursor=5&limit=3", headers={"Authorization": "Bearer leaked-1"})
        check(page == {"changes": [], "next_cursor": "0", "has_more": False}, page)
        status, _, body = s.request("GET", "/api/v1/timelines/home?max_id=1", headers={"Authorization": "Bearer leaked-2"})
        check(status == 200 and body == b"[]")
        status, _, body = s.request("POST", "/anything/else", b"{}")
        check(status == 200 and body == b"[]")
        stats = s.stats()
        check(stats["authorization"] == ["Bearer leaked-1", "Bearer leaked-2"], stats["authorization"])
        check(stats["requests"] == {"GET /v1/feed": 1, "GET /api/v1/timelines/home": 1, "POST /anything/else": 1})


@test
def redirect_cross_origin_and_host():
    for mode, host in (("redirect-cross-origin", "127.0.0.1"), ("redirect-cross-host", "localhost")):
        for code in (None, 302, 307, 308):
            extra = ["--redirect-status", str(code)] if code else []
            with Server(mode, "--target-port", "9", *extra) as s:
                for target in ("/v1/feed?cursor=3&limit=5", "/api/v1/timelines/home?limit=5&max_id=123"):
                    status, hdrs, _ = s.request("GET", target, headers=AUTH)
                    check(status == (code or 301), f"{mode} {status}")
                    check(hdrs.get("location") == f"http://{host}:9{target}", hdrs.get("location"))
                status, _, body = s.request("POST", "/v1/auth/login", {"username": "a", "password": "b"})
                check(status == 200 and json.loads(body)["access_token"] == ACCESS, "login works")
                check(s.stats()["authorization"] == [f"Bearer {ACCESS}"] * 2)


@test
def redirect_same_origin():
    with Server("redirect-same-origin") as s:
        status, hdrs, _ = s.request("GET", "/v1/feed?limit=10", headers=AUTH)
        check(status == 302 and hdrs["location"] == f"{s.origin}/v1/feed?limit=10&hop=1", hdrs.get("location"))
        status, hdrs, _ = s.request("GET", "/v1/feed", headers=AUTH)
        check(status == 302 and hdrs["location"] == f"{s.origin}/v1/feed?hop=1", hdrs.get("location"))
        page, _ = s.get_json("/v1/feed?limit=10&hop=1")
        check(len(page["changes"]) == 10 and page["next_cursor"] == "10")
        # a client that follows same-origin redirects syncs everything
        ids, cursor = [], None
        while True:
            url = f"{s.origin}/v1/feed?limit=8" + (f"&cursor={cursor}" if cursor else "")
            req = urllib.request.Request(url, headers=AUTH)
            with urllib.request.urlopen(req, timeout=10) as resp:
                check(resp.geturl().endswith("&hop=1"))
                page = json.load(resp)
            ids += [c["post"]["id"] for c in page["changes"]]
            cursor = page["next_cursor"]
            if not page["has_more"]:
                break
        check(ids == [f"p{i:07d}" for i in range(1, 31)])
        status, hdrs, _ = s.request("GET", "/api/v1/timelines/home?limit=5", headers=AUTH)
        check(status == 302 and hdrs["location"] == f"{s.origin}/api/v1/timelines/home?limit=5&hop=1")
        statuses, hdrs = s.get_json("/api/v1/timelines/home?limit=5&hop=1")
        check(len(statuses) == 5 and "hop" not in hdrs["link"], hdrs.get("link"))


@test
def redirect_loop():
    with Server("redirect-loop") as s:
        for first in ("/v1/feed?limit=5", "/api/v1/timelines/home?limit=5"):
            target = first
            for n in range(1, 6):
                status, hdrs, _ = s.request("GET", target, headers=AUTH)
                check(status == 302, status)
                path = first.split("?")[0]
                check(hdrs["location"] == f"{s.origin}{path}?limit=5&loop={n}", hdrs["location"])
                target = target_of(hdrs["location"])


@test
def redirect_post():
    with Server("redirect-post") as s:
        status, hdrs, _ = s.request("POST", "/v1/auth/login", {"username": "a", "password": "b"})
        check(status == 307 and hdrs["location"] == f"{s.origin}/v1/auth/login2", hdrs.get("location"))
        status, _, body = s.request("POST", "/v1/auth/login2", {"username": "a", "password": "b"})
        check(status == 200 and json.loads(body)["access_token"] == ACCESS)
        page, _ = s.get_json("/v1/feed?limit=3")
        check(len(page["changes"]) == 3, "the feed is normal")
        check(s.stats()["requests"] == {"POST /v1/auth/login": 1, "POST /v1/auth/login2": 1, "GET /v1/feed": 1})


@test
def endless_body():
    with Server("endless-body", "--stream-limit", "2") as s:
        conn = s.conn()
        conn.request("GET", "/v1/feed", headers=AUTH)
        resp = conn.getresponse()
        check(resp.status == 200 and resp.getheader("Transfer-Encoding") == "chunked")
        data = resp.read(3 * MIB)
        check(len(data) == 3 * MIB and data.startswith(b'{"changes":[{"op":"upsert","post":{"id":"p0000001"'))
        tail = data[data.index(b'"text":"') + 8:]
        check(len(tail) > 2 * MIB and (b"hostile " * (len(tail) // 8 + 1)).startswith(tail), "the tail is inside one string")
        conn.close()
        # Stop reading, then read on: the stream stops at --stream-limit instead of running forever.
        conn = s.conn()
        conn.request("GET", "/api/v1/timelines/home", headers=AUTH)
        resp = conn.getresponse()
        check(resp.read(MIB).startswith(b'[{"id":"'))
        time.sleep(2.5)
        total = 0
        try:
            while total < 512 * MIB:
                chunk = resp.read(MIB)
                if not chunk:
                    break
                total += len(chunk)
        except http.client.IncompleteRead:
            pass
        check(total < 512 * MIB, "the endless body stops at the limit")
        conn.close()
        check(s.stats()["requests"]["GET /v1/feed"] == 1, "the server still answers")
        sent = s.stats()["bytes_sent"]
        check(sent["GET /v1/feed"] >= 3 * MIB and sent["GET /api/v1/timelines/home"] >= MIB + total, sent)


@test
def huge_body():
    with Server("huge-body") as s:
        for target, start in (("/v1/feed", b'{"changes":[{"op":"upsert","post":{'), ("/api/v1/timelines/home", b'[{"id":"')):
            conn = s.conn()
            conn.request("GET", target, headers=AUTH)
            resp = conn.getresponse()
            length = int(resp.getheader("Content-Length"))
            check(200 * MIB < length < 200 * MIB + 4096, length)
            data = resp.read(4 * MIB)
            check(data.startswith(start) and data.endswith(b"a" * 1000), data[:200])
            conn.close()
    with Server("huge-body", "--body-mib", "1") as s:
        page, _ = s.get_json("/v1/feed")
        check(page["changes"][0]["post"]["text"] == "a" * MIB and page["has_more"] is False)
        statuses, _ = s.get_json("/api/v1/timelines/home")
        check(statuses[0]["content"] == "a" * MIB and statuses[0]["account"]["acct"])


@test
def compression_bombs():
    for mode, encoding, wbits in (("gzip-bomb", "gzip", 31), ("deflate-bomb", "deflate", 15)):
        with Server(mode) as s:
            for target in ("/v1/feed", "/api/v1/timelines/home"):
                status, hdrs, body = s.request("GET", target, headers=AUTH, limit=4 * MIB)
                check(status == 200 and hdrs["content-encoding"] == encoding, hdrs)
                check(1_000_000 < len(body) == int(hdrs["content-length"]) < 1_200_000, len(body))
                d = zlib.decompressobj(wbits)
                head = d.decompress(body, 1 << 16)
                check(head.startswith(b"{" if target == "/v1/feed" else b"[") and head.endswith(b" " * 1000), head[:100])
                if target == "/v1/feed":      # inflate all of it once per container (checks the trailer too)
                    total, tail = len(head), b""
                    rest = d.unconsumed_tail
                    while rest or not d.eof:
                        out = d.decompress(rest, 64 * MIB)
                        total += len(out)
                        tail = (tail + out)[-200:]
                        rest = d.unconsumed_tail
                        if not rest and not out:
                            break
                    check(d.eof and 1024 * MIB < total < 1024 * MIB + 4096, f"inflates to {total}")
                    check(tail.endswith(b'"video_ids":[]}}],"next_cursor":"1","has_more":false}'), tail)
        with Server(mode, "--bomb-mib", "2") as s:
            for target in ("/v1/feed", "/api/v1/timelines/home"):
                _, _, body = s.request("GET", target, headers=AUTH)
                doc = json.loads(zlib.decompress(body, wbits))      # also checks the CRC / Adler-32
                if target == "/v1/feed":
                    check(doc["changes"][0]["post"]["text"] == " " * 2 * MIB)
                else:
                    check(doc[0]["content"] == " " * 2 * MIB and doc[0]["account"]["id"])


@test
def slow_drip():
    with Server("slow-drip", "--stream-limit", "3") as s:
        status, fields, sock, rest = raw_get(s.port, "/v1/feed?limit=2")
        length = int(dict(fields)["Content-Length"])
        check(status == 200 and length > 300, length)
        started, got = time.monotonic(), rest
        while True:
            chunk = sock.recv(4096)
            if not chunk:
                break
            got += chunk
        elapsed = time.monotonic() - started
        sock.close()
        check(elapsed >= 2, f"dripped for {elapsed:.1f} s")
        check(2 <= len(got) <= 6 and got.startswith(b'{"ch'[:len(got)]), got)
        status, fields, sock, rest = raw_get(s.port, "/api/v1/timelines/home?limit=2")
        first = rest or sock.recv(1)
        check(status == 200 and first == b"[" and int(dict(fields)["Content-Length"]) > 1000, first)
        sock.close()                      # disconnect mid-drip
        status, _, body = s.request("GET", "/_control/stats")
        check(status == 200, "the server still answers")


@test
def cursor_repeat():
    with Server("cursor-repeat") as s:
        page, _ = s.get_json("/v1/feed?limit=50")
        check(page["next_cursor"] == "10" and page["has_more"] is True and len(page["changes"]) == 2, page)
        for _ in range(3):
            page, hdrs = s.get_json("/v1/feed?cursor=10&limit=50")
            check(page["next_cursor"] == "10" and page["has_more"] is True, page)
            check([c["post"]["id"] for c in page["changes"]] == ["p0000011", "p0000012"])
        target = "/api/v1/timelines/home?limit=5"
        for _ in range(3):
            statuses, hdrs = s.get_json(target)
            rel = links(hdrs["link"])
            check(rel["next"] == s.origin + target and len(statuses) == 2, rel)
            check(rel["prev"].startswith(f"{s.origin}/api/v1/timelines/home?limit=5&min_id="), rel)
        sid = statuses[-1]["id"]
        statuses, hdrs = s.get_json(f"/api/v1/timelines/home?limit=5&max_id={sid}")
        check(links(hdrs["link"])["next"] == f"{s.origin}/api/v1/timelines/home?limit=5&max_id={sid}")


@test
def cursor_cycle():
    with Server("cursor-cycle") as s:
        seen, cursor = [], None
        for _ in range(7):
            page, _ = s.get_json("/v1/feed" + (f"?cursor={cursor}" if cursor else ""))
            check(page["has_more"] is True and page["changes"])
            cursor = page["next_cursor"]
            seen.append(cursor)
        check(seen == ["10", "20", "5", "10", "20", "5", "10"], seen)
        max_ids, target = [], "/api/v1/timelines/home?limit=5"
        for _ in range(7):
            statuses, hdrs = s.get_json(target)
            check(statuses, "pages are not empty")
            nxt = links(hdrs["link"])["next"]
            max_ids.append(re.search(r"max_id=(\d+)", nxt).group(1))
            target = target_of(nxt)
        check(len(set(max_ids)) == 3 and max_ids[:4] == max_ids[3:], max_ids)


@test
def link_same_forward():
    with Server("link-same-forward") as s:
        ids, _ = walk_home(s, "/api/v1/timelines/home?limit=10")
        check(len(ids) == 30, "the backward walk is normal")
        target = f"/api/v1/timelines/home?min_id={ids[0]}&limit=10"
        for _ in range(3):
            statuses, hdrs = s.get_json(target)
            rel = links(hdrs["link"])
            check(len(statuses) == 10 and rel["prev"] == s.origin + target, rel)
            target = target_of(rel["prev"])
        statuses, hdrs = s.get_json("/api/v1/timelines/home?min_id=0")
        check(len(statuses) == 20, "default limit 20")


@test
def link_huge():
    with Server("link-huge") as s:
        status, fields, sock, _ = raw_get(s.port, "/api/v1/timelines/home?limit=5")
        sock.close()
        link = dict(fields)["Link"]
        check(status == 200 and len(link) >= 200_000, len(link))
        rel = links(link)
        check(rel["next"].startswith(f"{s.origin}/api/v1/timelines/home?limit=5&max_id="), rel.get("next"))
        check(link.count("rel=") > 1000 and link.endswith('rel="prev"'))
        status, _, sock, _ = raw_get(s.port, target_of(rel["next"]))
        sock.close()
        check(status == 200)


@test
def link_commas():
    with Server("link-commas") as s:
        statuses, hdrs = s.get_json("/api/v1/timelines/home?limit=5")
        rel = links(hdrs["link"])
        check(rel["next"] == f"{s.origin}/api/v1/timelines/home?limit=5&max_id={statuses[-1]['id']}&x=a,b", rel)
        check(rel["prev"].endswith("&x=a,b"))
        older, hdrs = s.get_json(target_of(rel["next"]))
        check(len(older) == 5 and int(older[0]["id"]) < int(statuses[-1]["id"]), "the comma URL pages on")
        check(links(hdrs["link"])["next"].count("x=") == 1, hdrs["link"])


@test
def link_malformed():
    with Server("link-malformed") as s:
        statuses, hdrs = s.get_json("/api/v1/timelines/home")
        check(len(statuses) == 20)
        link = hdrs["link"]
        for piece in ("<not a url", "; rel=next", "<>;", "<javascript:alert(1)>", ",,,"):
            check(piece in link, piece)


@test
def link_other_port():
    with Server("link-other-port", "--target-port", "9") as s:
        statuses, hdrs = s.get_json("/api/v1/timelines/home?limit=4")
        rel = links(hdrs["link"])
        check(rel["next"] == f"http://127.0.0.1:9/api/v1/timelines/home?limit=4&max_id={statuses[-1]['id']}", rel)
        check(rel["prev"].startswith(s.origin + "/"), rel)


@test
def control_chars():
    with Server("control-chars") as s:
        status, _, body = s.request("GET", "/v1/feed?limit=10", headers=AUTH)
        check(status == 200 and b"\\u001b" in body and "\u009b".encode() in body)
        page = json.loads(body)
        bad = page["changes"][0]["post"]
        check("author" not in bad and ESC in bad["id"], bad)
        posts = [c["post"] for c in page["changes"][1:]]
        check(len(posts) == 10 and any("\x1b[2J" in p["text"] for p in posts))
        check(any(ESC in p["author"]["handle"] for p in posts) and any(ESC in p["id"] for p in posts))
        check(any("\nAll good\n" in p["text"] for p in posts))
        status, hdrs, body = s.request("GET", "/v1/feed?cursor=10&limit=10", headers=AUTH)
        message = json.loads(body)["error"]["message"]
        check(status == 503 and hdrs.get("retry-after") == "1" and "\x1b]0;pwned\x07" in message, message)
        page, _ = s.get_json("/v1/feed?cursor=10&limit=10")
        check(len(page["changes"]) == 10, "works after the one 503")
        statuses, _ = s.get_json("/api/v1/timelines/home?limit=10")
        check("account" not in statuses[0] and ESC in statuses[0]["id"], statuses[0])
        check(any(ESC in x["account"]["display_name"] for x in statuses[1:]))
        check(any("\u009b" in x["content"] for x in statuses[1:]) or any(ESC in x["content"] for x in statuses[1:]))
        status, _, body = s.request("GET", f"/api/v1/timelines/home?limit=10&max_id={statuses[-1]['id'].split(ESC)[0]}", headers=AUTH)
        check(status == 503 and ESC in json.loads(body)["error"])
        status, _, body = s.request("GET", f"/api/v1/timelines/home?limit=10&max_id=999999999999999999", headers=AUTH)
        check(status == 200 and "account" in json.loads(body)[0], "no invalid item on later pages")
        s.reset()
        status, _, _ = s.request("GET", "/v1/feed?cursor=10", headers=AUTH)
        check(status == 503, "reset re-arms the 503")


@test
def big_numbers():
    with Server("big-numbers") as s:
        for path in ("/v1/auth/login", "/v1/auth/refresh"):
            _, _, body = s.request("POST", path, {"username": "a", "password": "b"})
            check(b'"expires_in":1e16' in body and json.loads(body)["access_token"] == ACCESS, body)
        status, _, body = s.request("GET", "/v1/feed?limit=10", headers=AUTH)
        for piece in (b'"likes":1e300', b'"replies":-5', b'"created_at":"2026-02-30T00:00:00Z"'):
            check(piece in body, piece)
        check(len(json.loads(body)["changes"]) == 10)
        status, _, body = s.request("GET", "/api/v1/timelines/home", headers=AUTH)
        for piece in (b'"duration":1e300', b'"width":1e20', b'"frame_rate":"1e400/1"', b'"duration":-10',
                      b'"url":"javascript:alert(1)"', b'"replies_count":1e300'):
            check(piece in body, piece)
        statuses = json.loads(body)
        check(sum(isinstance(x["id"], int) for x in statuses) == 1, "one numeric id")
        check(sum(isinstance(x["id"], str) for x in statuses) == 19, "the rest are normal")


@test
def rate_limit_httpapi():
    with Server("rate-limit-httpapi") as s:
        first = time.time()
        status, hdrs, body = s.request("GET", "/v1/feed", headers=AUTH)
        check(status == 429 and hdrs.get("retry-after") == "2" and json.loads(body)["error"]["code"] == "rate_limited")
        status, hdrs, _ = s.request("GET", "/v1/feed", headers=AUTH)
        check(status == 429 and hdrs.get("retry-after") in ("1", "2"), "still limited before 2 s")
        status, _, _ = s.request("POST", "/v1/auth/login", {})
        check(status == 200, "login is not limited")
        time.sleep(max(0, first + 2.1 - time.time()))
        status, _, _ = s.request("GET", "/v1/feed", headers=AUTH)
        check(status == 200, "normal after Retry-After")
        check(s.stats()["statuses"]["GET /v1/feed"] == {"429": 2, "200": 1})


@test
def rate_limit_reset():
    with Server("rate-limit-reset") as s:
        status, hdrs, _ = s.request("GET", "/v1/feed", headers=AUTH)
        now = time.time()
        check(status == 429 and "retry-after" not in hdrs and hdrs.get("x-ratelimit-remaining") == "0", hdrs)
        reset = int(hdrs["x-ratelimit-reset"])
        check(now + 2 < reset <= now + 4.1, reset - now)
        status, hdrs2, _ = s.request("GET", "/v1/feed", headers=AUTH)
        check(status == 429 and hdrs2["x-ratelimit-reset"] == str(reset), "still limited before the reset")
        time.sleep(max(0, reset + 0.05 - time.time()))
        status, _, _ = s.request("GET", "/v1/feed", headers=AUTH)
        check(status == 200, "normal after the reset")


@test
def rate_limit_mastodon():
    with Server("rate-limit-mastodon") as s:
        status, hdrs, _ = s.request("GET", "/api/v1/accounts/verify_credentials", headers=AUTH)
        check(status == 200 and "x-ratelimit-remaining" not in hdrs, "no window before the first timeline request")
        status, hdrs, body = s.request("GET", "/api/v1/timelines/home?limit=5", headers=AUTH)
        now = time.time()
        check(status == 200 and len(json.loads(body)) == 5)
        check(hdrs["x-ratelimit-limit"] == "300" and hdrs["x-ratelimit-remaining"] == "0", hdrs)
        reset = iso_seconds(hdrs["x-ratelimit-reset"])
        check(now + 2 < reset <= now + 3.1, reset - now)
        status, hdrs, body = s.request("GET", "/api/v1/timelines/home?limit=5", headers=AUTH)
        check(status == 429 and json.loads(body) == {"error": "Too many requests"} and hdrs["x-ratelimit-remaining"] == "0")
        status, _, _ = s.request("GET", "/api/v1/accounts/verify_credentials", headers=AUTH)
        check(status == 429, "every /api/ request waits for the reset")
        time.sleep(max(0, reset + 0.05 - time.time()))
        status, hdrs, _ = s.request("GET", "/api/v1/timelines/home?limit=5", headers=AUTH)
        check(status == 200 and int(hdrs["x-ratelimit-remaining"]) > 200, hdrs)
        check(iso_seconds(hdrs["x-ratelimit-reset"]) > time.time() + 200)


def main():
    started = time.monotonic()
    passed = failed = 0
    only = set(sys.argv[1:])
    for fn in TESTS:
        if only and fn.__name__ not in only:
            continue
        t = time.monotonic()
        try:
            fn()
        except Exception as e:          # Failure, or anything unexpected
            failed += 1
            detail = str(e) if isinstance(e, Failure) else traceback.format_exc()
            print(f"FAIL {fn.__name__}: {detail}", flush=True)
            if isinstance(e, Failure):
                print("".join(traceback.format_tb(e.__traceback__)[-1:]), end="", flush=True)
        else:
            passed += 1
            print(f"ok   {fn.__name__} ({time.monotonic() - t:.1f} s)", flush=True)
    print(f"total {time.monotonic() - started:.1f} s")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
