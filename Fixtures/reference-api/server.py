#!/usr/bin/env python3
"""Reference backend for the feedsync HTTP API (Integrations/HTTPAPI/API.md).

Standard library only. See README.md beside this file for the options and the
/_control endpoints tests use to change the feed and inject faults.
"""
import argparse
import bisect
import calendar
import collections
import ipaddress
import json
import os
import random
import re
import secrets
import signal
import socket
import struct
import sys
import threading
import time
from array import array
from collections import OrderedDict
from http.client import responses
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from credential_echo import CredentialEcho  # noqa: E402

EPOCH = calendar.timegm((2026, 1, 1, 0, 0, 0))
STEP = 37                          # seconds between consecutive log positions
CHUNK_BITS = 10                    # posts are generated and cached 1024 at a time
CHUNK_MASK = (1 << CHUNK_BITS) - 1
MAX_LIMIT = 1000
PAGE_CACHE_BYTES = 64 << 20
MAX_BODY = 1 << 20

WORDS = (
    "morning coffee release build ship swift sqlite feed sync cache offline network latency video "
    "stream update patch review merge branch deploy weekend garden river mountain city train station "
    "bakery bread sourdough rain sunshine thread question answer idea draft notes meeting lunch dinner "
    "walk run bike trip photo camera sunset harbor ferry market music concert vinyl book chapter "
    "library quiet loud tiny huge new old fast slow bright dark finally again today tomorrow honestly "
    "really maybe definitely never always just still almost the a an of to and with for from about "
    "into over under after before while because but so #swift #sqlite #buildinpublic #release @ada "
    "@grace café naïve Zürich São Paulo 東京 🚀 ✨ ☕ 🎉 — 'quoted' \"double\""
).split()
FIRST_NAMES = (
    "Ada Grace Alan Barbara Edsger Donald Margaret Dennis Ken Linus Guido Bjarne Niklaus John Frances "
    "Radia Hedy Katherine Dorothy Mary Annie Jean Betty Kathleen Sophie Lynn Adele Joan Carol Susan "
    "Anita Shafi Tim Vint Bob Leslie Butler Tony Robin Fran Ivan Seymour Yukihiro Rasmus Brendan Chris "
    "Lars Anders Chiara Noor Mateo Ingrid Yusuf Amara Kenji Lucía Björn"
).split()
LAST_NAMES = (
    "Byron Hopper Turing Liskov Dijkstra Knuth Hamilton Ritchie Thompson Torvalds Rossum Wirth McCarthy "
    "Allen Perlman Lamarr Johnson Vaughan Keller Easley Bartik Wilson Booth Clarke Goldberg Shaw Borg "
    "Okafor Müller Sørensen Tanaka Álvarez"
).split()
MALFORMED_BODIES = [b'{"changes": [{"op": "upsert", "post": ', b"<html><body>Bad Gateway</body></html>",
                    b"not json at all", b'{"changes":[],"next_cursor":"1","has_more":fals']
DEFAULT_FAULTS = {"error_rate": 0.0, "error_status": 503, "rate_limit_every": 0, "retry_after": 1,
                  "latency_ms": 0, "truncate_rate": 0.0, "malformed_rate": 0.0, "reset_rate": 0.0,
                  "quota": 0, "quota_window": 1}
ERROR_CODES = {500: "internal_error", 502: "bad_gateway", 503: "unavailable", 504: "gateway_timeout"}
HOLD_LIMIT = 600                   # seconds a held page waits at most for /_control/release

_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_esc = json.encoder.encode_basestring          # same escaping as _json for a single string
_days = {}
_time_of_day = [f"{h:02d}:{m:02d}:{s:02d}Z" for h in range(24) for m in range(60) for s in range(60)]


def day_prefix(day):
    prefix = _days.get(day)
    if prefix is None:
        prefix = _days[day] = time.strftime("%Y-%m-%dT", time.gmtime(EPOCH + day * 86400))
    return prefix


def ts(seconds):
    """RFC 3339 for EPOCH + seconds; table-driven because strftime dominated generation time."""
    return day_prefix(seconds // 86400) + _time_of_day[seconds % 86400]


def secs(stamp):
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")) - EPOCH


def post_id(i):
    return f"p{i:07d}"


def error_body(code, message):
    return _json({"error": {"code": code, "message": message}}).encode()


class Feed:
    """The account's feed as a change log.

    Truth is the list of encoded change bytes per post (upsert or tombstone), generated lazily per
    1024-post chunk from a seed derived from (seed, chunk), so post i is the same whatever --posts
    was and appends continue the same generator. The log is two parallel arrays (seq, post number);
    a post's live entry is the one whose seq equals post_seq[post], older entries are skipped.
    """

    def __init__(self, posts, seed, video_ids):
        self.lock = threading.Lock()
        self.seed, self.video_ids = seed, [_esc(v) for v in video_ids]
        rng = random.Random(seed)
        self.authors = [_json({"id": f"u{n:03d}", "handle": first.lower(),
                               "display_name": f"{first} {rng.choice(LAST_NAMES)}",
                               "avatar_url": f"https://avatars.example.com/u{n:03d}.png"})
                        for n, first in enumerate(rng.sample(FIRST_NAMES, 50), 1)]
        # Two pools whose halves combine into 5-30 word texts: far cheaper per post than drawing words.
        self.heads = [" ".join(rng.choices(WORDS, k=rng.randint(2, 15))) for _ in range(4096)]
        self.heads = [h[0].upper() + h[1:] for h in self.heads]
        self.tails = [" ".join(rng.choices(WORDS, k=rng.randint(3, 15))) + "." for _ in range(4096)]
        self.max_id = self.head = posts
        self.log_seqs = array("q", range(1, posts + 1))
        self.log_ids = array("q", self.log_seqs)
        self.post_seq = array("q", range(posts + 1))
        self.chunks = {}
        self.deleted = set()
        self.pages, self.pages_bytes = OrderedDict(), 0

    def place_avatars(self, base):
        """--avatars-here: author n's avatar at `base`/v1/avatars/uNNN.png (behind the bearer token, as
        the feed is) when n is odd, and at `base`/v1/avatars/away-uNNN.png (a redirect to another
        origin) when n is even. Called before any post is generated."""
        self.authors = [author.replace("https://avatars.example.com/", f"{base}/v1/avatars/" + ("away-" if n % 2 == 0 else ""))
                        for n, author in enumerate(self.authors, 1)]

    def _generate(self, k):
        # Hot loop at up to a million posts: builds the JSON text directly from pre-encoded parts.
        rng = random.Random(f"feedsync:{self.seed}:{k}")
        r, bits = rng.random, rng.getrandbits
        authors, heads, tails, vids, tod = self.authors, self.heads, self.tails, self.video_ids, _time_of_day
        out = [b""] if k == 0 else []
        for i in range(max(1, k << CHUNK_BITS), (k + 1) << CHUNK_BITS):
            text = heads[bits(12)] + " " + tails[bits(12)]
            edited = "null"
            if r() < 0.05:
                text += " (edited)"
                edited = f'"{ts(i * STEP + 60 + int(r() * 7200))}"'
            reply = f'"p{1 + int(r() * (i - 1)):07d}"' if i > 1 and r() < 0.10 else "null"
            videos = "[]"
            if vids and r() < 0.15:
                picked = {vids[int(r() * len(vids))] for _ in range(1 + (r() < 0.3))}
                videos = "[" + ",".join(sorted(picked)) + "]"
            created = i * STEP
            u, a, b, c = r(), r(), r(), r()
            out.append(
                f'{{"op":"upsert","post":{{"id":"p{i:07d}","author":{authors[int(u * u * 50)]},'
                f'"text":{_esc(text)},"created_at":"{day_prefix(created // 86400)}{tod[created % 86400]}",'
                f'"edited_at":{edited},"reply_to":{reply},"counts":{{"replies":{int(a * a * a * 40)},'
                f'"reposts":{int(b * b * b * 80)},"likes":{int(c * c * 500)}}},"video_ids":{videos}}}}}'.encode())
        return out

    def _chunk(self, k):
        chunk = self.chunks.get(k)
        if chunk is None:
            chunk = self.chunks[k] = self._generate(k)
        return chunk

    def warm(self):
        with self.lock:
            for k in range((self.max_id >> CHUNK_BITS) + 1):
                self._chunk(k)

    def change(self, i):
        return self._chunk(i >> CHUNK_BITS)[i & CHUNK_MASK]

    def live_count(self):
        return self.max_id - len(self.deleted)

    def page(self, cursor, limit):
        """(body, next_cursor) for the changes after seq `cursor`; bodies are joins of cached bytes."""
        with self.lock:
            key = (cursor, limit, self.head)
            hit = self.pages.get(key)
            if hit is not None:
                self.pages.move_to_end(key)
                return hit
            seqs, ids, pseq, chunks = self.log_seqs, self.log_ids, self.post_seq, self.chunks
            out, last, has_more = [], None, False
            j, n = bisect.bisect_right(seqs, cursor), len(seqs)
            while j < n:
                i = ids[j]
                if pseq[i] == seqs[j]:
                    if len(out) == limit:
                        has_more = True
                        break
                    chunk = chunks.get(i >> CHUNK_BITS) or self._chunk(i >> CHUNK_BITS)
                    out.append(chunk[i & CHUNK_MASK])
                    last = seqs[j]
                j += 1
            next_cursor = str(self.head if last is None else last)
            body = b"".join((b'{"changes":[', b",".join(out), b'],"next_cursor":"', next_cursor.encode(),
                             b'","has_more":', b"true}" if has_more else b"false}"))
            if len(body) < PAGE_CACHE_BYTES // 4:
                self.pages[key] = (body, next_cursor)
                self.pages_bytes += len(body)
                while self.pages_bytes > PAGE_CACHE_BYTES:
                    self.pages_bytes -= len(self.pages.popitem(last=False)[1][0])
            return body, next_cursor

    def corrupt(self, i, field, value):
        """Rewrite the first `field` (a string, number or null) of post i's live change to `value`,
        in place: the server still lists the post where it was, as a bad record. None if there is
        no such live post or field."""
        with self.lock:
            if not 1 <= i <= self.max_id or i in self.deleted:
                return None
            chunk = self._chunk(i >> CHUNK_BITS)
            name = re.escape(field.encode())
            new, n = re.subn(rb'"' + name + rb'":("(?:[^"\\]|\\.)*"|null|-?[0-9.eE+-]+)',
                             lambda _: b'"' + field.encode() + b'":' + _json(value).encode(), chunk[i & CHUNK_MASK], count=1)
            if n == 0:
                return None
            chunk[i & CHUNK_MASK] = new
            self.pages.clear()
            self.pages_bytes = 0
            return self.head

    def _move_to_head(self, i, change):
        """Record a new latest change for post i (lock held); returns the new head."""
        self.chunks[i >> CHUNK_BITS][i & CHUNK_MASK] = change
        self.head += 1
        self.log_seqs.append(self.head)
        self.log_ids.append(i)
        self.post_seq[i] = self.head
        # Every cached page is keyed by the old head and can never be hit again.
        self.pages.clear()
        self.pages_bytes = 0
        return self.head

    def append(self, count):
        with self.lock:
            first_seq, first_id = self.head + 1, self.max_id + 1
            self.log_seqs.extend(range(first_seq, first_seq + count))
            self.log_ids.extend(range(first_id, first_id + count))
            self.post_seq.extend(range(first_seq, first_seq + count))
            self.max_id += count
            self.head += count
            if count:
                self.pages.clear()
                self.pages_bytes = 0
            return self.live_count(), self.head

    def _live_post(self, i):
        if not 1 <= i <= self.max_id or i in self.deleted:
            return None
        return json.loads(self.change(i))["post"]

    def edit(self, i):
        with self.lock:
            post = self._live_post(i)
            if post is None:
                return None
            m = re.search(r" \[edit (\d+)\]$", post["text"])
            post["text"] += f" [edit {int(m.group(1)) + 1 if m else 1}]"
            # The log clock (STEP per seq) keeps times increasing; never go back before the last edit.
            previous = secs(post["edited_at"] or post["created_at"])
            post["edited_at"] = ts(max((self.head + 1) * STEP, previous + 1))
            return self._move_to_head(i, _json({"op": "upsert", "post": post}).encode())

    def delete(self, i):
        with self.lock:
            post = self._live_post(i)
            if post is None:
                return None
            when = ts(max((self.head + 1) * STEP, secs(post["edited_at"] or post["created_at"]) + 1))
            self.deleted.add(i)
            return self._move_to_head(i, _json({"op": "delete", "id": post_id(i), "deleted_at": when}).encode())

    def snapshot(self):
        with self.lock:
            max_id, deleted = self.max_id, set(self.deleted)
            changes = [self.change(i) for i in range(1, max_id + 1) if i not in deleted]
        posts = []
        for raw in changes:
            p = json.loads(raw)["post"]
            posts.append({"id": p["id"], "author_id": p["author"]["id"], "text": p["text"],
                          "created_at": p["created_at"], "edited_at": p["edited_at"],
                          "reply_to": p["reply_to"], "video_ids": p["video_ids"]})
        return {"posts": posts}


class API:
    """The /v1/ endpoints as a pure function of the request, shared by the server and --dump."""

    def __init__(self, feed, args):
        self.feed, self.args = feed, args
        self.lock = threading.Lock()
        self.access, self.refresh = {}, set()        # access token -> monotonic expiry
        self.fixed_tokens = False                     # --dump records stable fake tokens

    def _issue(self):
        with self.lock:
            if self.fixed_tokens:
                access, refresh = "demo-access-token", "demo-refresh-token"
            else:
                access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
                if len(self.access) > 100_000:        # forget long-expired tokens now and then
                    now = time.monotonic()
                    self.access = {t: e for t, e in self.access.items() if e > now - 3600}
            self.access[access] = time.monotonic() + self.args.token_ttl
            self.refresh.add(refresh)
        return 200, [], _json({"access_token": access, "refresh_token": refresh, "token_type": "Bearer",
                               "expires_in": self.args.token_ttl}).encode()

    def handle(self, method, path, query, body, headers):
        """Returns (status, [(header, value)], body bytes or None)."""
        routes = {"/v1/auth/login": ("POST", self.login), "/v1/auth/refresh": ("POST", self.do_refresh),
                  "/v1/feed": ("GET", self.get_feed)}
        if path not in routes:
            return 404, [], error_body("not_found", f"No such endpoint: {path}")
        allowed, handler = routes[path]
        if method != allowed:
            return 405, [("Allow", allowed)], error_body("method_not_allowed", f"Use {allowed} {path}.")
        return handler(query, body, headers)

    @staticmethod
    def _json_object(body, *fields):
        try:
            obj = json.loads(body or b"")
        except (ValueError, UnicodeDecodeError):
            return None
        if not isinstance(obj, dict) or not all(isinstance(obj.get(f), str) for f in fields):
            return None
        return obj

    def login(self, query, body, headers):
        creds = self._json_object(body, "username", "password")
        if creds is None:
            return 400, [], error_body("bad_request", 'Expected {"username": "…", "password": "…"}.')
        same = lambda given, expected: secrets.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode())
        # --users N: USERNAME, then USERNAME2 … USERNAMEN, one password (a cluster's many accounts on one server).
        names = [self.args.username] + [f"{self.args.username}{n}" for n in range(2, self.args.users + 1)]
        ok = any([same(creds["username"], name) for name in names]) & same(creds["password"], self.args.password)
        if not ok:
            return 401, [], error_body("invalid_credentials", "Wrong username or password.")
        return self._issue()

    def do_refresh(self, query, body, headers):
        req = self._json_object(body, "refresh_token")
        if req is None:
            return 400, [], error_body("bad_request", 'Expected {"refresh_token": "…"}.')
        with self.lock:
            known = req["refresh_token"] in self.refresh
            self.refresh.discard(req["refresh_token"])
        if not known:
            return 401, [], error_body("invalid_refresh_token", "Unknown or already used refresh token; log in again.")
        return self._issue()

    def refusal(self, headers):
        """(status, headers, body) of a 401 for a request without a good access token; None when it has one."""
        scheme, _, token = (headers.get("Authorization") or "").partition(" ")
        expiry = self.access.get(token.strip()) if scheme.lower() == "bearer" else None
        if expiry is None:
            return 401, [], error_body("unauthorized", "Missing or unknown access token.")
        if time.monotonic() >= expiry:
            return 401, [], error_body("token_expired", "The access token has expired; refresh it.")
        return None

    def get_feed(self, query, body, headers):
        refused = self.refusal(headers)
        if refused:
            return refused
        params = parse_qs(query, keep_blank_values=True)
        feed = self.feed
        cursor = 0
        if "cursor" in params:
            raw = params["cursor"][0]
            # Only strings this server hands out are valid: canonical decimals up to the head.
            if not re.fullmatch(r"0|[1-9][0-9]{0,17}", raw) or int(raw) > feed.head:
                return 400, [], error_body("bad_cursor", f"Unknown cursor: {raw!r}.")
            cursor = int(raw)
        limit = self.args.page_size
        if "limit" in params:
            raw = params["limit"][0]
            if not re.fullmatch(r"[0-9]{1,4}", raw) or not 1 <= int(raw) <= MAX_LIMIT:
                return 400, [], error_body("bad_limit", f"limit must be an integer in 1…{MAX_LIMIT}.")
            limit = int(raw)
        page, next_cursor = feed.page(cursor, limit)
        etag = f'"v{next_cursor}"'
        match = headers.get("If-None-Match")
        if match and any(t.strip() in ("*", etag, "W/" + etag) for t in match.split(",")):
            return 304, [("ETag", etag)], None
        return 200, [("ETag", etag)], page


class Faults:
    """Injected failures for /v1/ requests, reproducible: the RNG is reseeded whenever settings change."""

    def __init__(self, seed):
        self.seed = seed
        self.lock = threading.Lock()
        self.set({})

    def set(self, settings):
        clean = dict(DEFAULT_FAULTS)
        for key, value in settings.items():
            number = isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
            whole = number and value == int(value)
            ok = {"error_status": whole and 400 <= value <= 599, "rate_limit_every": whole, "latency_ms": number,
                  "quota": whole, "quota_window": number and value > 0,
                  # Seconds, or a string (an HTTP date) sent verbatim.
                  "retry_after": whole or isinstance(value, str) and value.strip() != "" and value.isprintable(),
                  }.get(key, key in DEFAULT_FAULTS and number and value <= 1)
            if not ok:
                raise ValueError(f"bad setting {key!r}: {value!r}")
            whole_keys = ("error_status", "rate_limit_every", "retry_after", "quota")
            clean[key] = int(value) if key in whole_keys and not isinstance(value, str) else value
        with self.lock:
            self.settings = clean
            self.active = clean != DEFAULT_FAULTS
            self.rng = random.Random(f"faults:{self.seed}")
            self.count = 0
            self.window_start, self.window_used = None, 0
        return clean

    def spend_quota(self):
        """X-RateLimit headers for the next /v1/ request, and whether the quota still allows it.

        A fixed window of quota_window seconds starts at the first request; Reset is Unix seconds.
        """
        with self.lock:
            quota, window = self.settings["quota"], self.settings["quota_window"]
            if not quota:
                return [], True
            now = time.time()
            if self.window_start is None or now >= self.window_start + window:
                self.window_start, self.window_used = now, 0
            allowed = self.window_used < quota
            if allowed:
                self.window_used += 1
            reset = self.window_start + window
            return [("X-RateLimit-Limit", str(quota)), ("X-RateLimit-Remaining", str(quota - self.window_used)),
                    ("X-RateLimit-Reset", f"{reset:.3f}")], allowed

    def decide(self):
        """(latency in seconds, action or None, request number) for the next /v1/ request."""
        if not self.active:
            return 0, None, 0
        with self.lock:
            s = self.settings
            self.count += 1
            # Always four draws, so changing one rate does not reshuffle the others' decisions.
            d = [self.rng.random() for _ in range(4)]
            every = s["rate_limit_every"]
            if every and self.count % every == 0:
                action = "rate_limit"
            elif d[0] < s["reset_rate"]:
                action = "reset"
            elif d[1] < s["error_rate"]:
                action = "error"
            elif d[2] < s["malformed_rate"]:
                action = "malformed"
            elif d[3] < s["truncate_rate"]:
                action = "truncate"
            else:
                action = None
            return s["latency_ms"] / 1000, action, self.count


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "feedsync-reference/1"

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        url = urlsplit(self.path)
        body = self._read_body()
        if body is None:
            return
        if url.path.startswith("/v1/avatars/") or url.path.startswith("/avatars/"):
            self._avatar(url.path)
        elif url.path.startswith("/v1/"):
            self._api(url.path, url.query, body)
        elif url.path.startswith("/_control/"):
            self._control(url.path, url.query, body)
        else:
            self._send(404, [], error_body("not_found", f"No such endpoint: {url.path}"))

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def _read_body(self):
        # Always consume the body, or the next request on this keep-alive connection would be misread.
        length = self.headers.get("Content-Length") or "0"
        if self.headers.get("Transfer-Encoding") or not length.isdigit() or int(length) > MAX_BODY:
            self.close_connection = True
            self._send(400, [], error_body("bad_request", "Need a Content-Length of at most 1 MiB, no chunking."))
            return None
        return self.rfile.read(int(length)) if length != "0" else b""

    def _send(self, status, headers, body, truncate=False, count_bytes=None):
        lines = [f"HTTP/1.1 {status} {responses.get(status, 'Error')}"]
        if body is not None:
            lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
        lines += [f"{name}: {value}" for name, value in headers]
        if truncate:
            self.close_connection = True
        if self.close_connection:
            lines.append("Connection: close")
        elif self.request_version == "HTTP/1.0":
            lines.append("Connection: keep-alive")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        if body:
            head += body[: len(body) // 2] if truncate else body
        if count_bytes:
            count_bytes(len(head))    # before the write, so a client holding the answer sees it counted
        self.wfile.write(head)

    def _avatar(self, path):
        """--avatars-here: /v1/avatars/uNNN.png needs the access token; /v1/avatars/away-uNNN.png
        redirects (with the token) to http://localhost:PORT/avatars/uNNN.png, another origin that
        needs none. Each request's Host, path and whether it carried an Authorization are recorded."""
        app = self.server.app
        with app.stats_lock:
            app.avatar_requests.append({"host": self.headers.get("Host", ""), "path": path,
                                        "authorization": self.headers.get("Authorization") is not None})
        name = path.rsplit("/", 1)[1]
        if not re.fullmatch(r"(away-)?u[0-9]{3}\.png", name) or (path.startswith("/avatars/") and name.startswith("away-")):
            return self._send(404, [], error_body("not_found", f"No such avatar: {path}"))
        if path.startswith("/v1/"):
            refused = app.api.refusal(self.headers)
            if refused:
                return self._send(*refused)
            if name.startswith("away-"):
                location = f"http://localhost:{self.server.server_address[1]}/avatars/{name[5:]}"
                return self._send(302, [("Location", location)], b"")
        image = (b"\x89PNG\r\n\x1a\n" + name.encode()) * 64
        self.wfile.write((f"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: {len(image)}\r\n\r\n").encode() + image)

    def _api(self, path, query, body):
        app = self.server.app
        key = f"{self.command} {path}"
        if app.echo.respond(self, path, body):
            app.count(key, "echo")
            return
        if key == "GET /v1/feed":
            app.pass_or_hold()
        latency, action, n = app.faults.decide()
        if latency:
            time.sleep(latency)
        if action == "reset":
            app.count(key, "reset")
            # Linger 0 turns the close into a TCP RST, as a crashed proxy would.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()
            return
        settings = app.faults.settings
        quota_headers, allowed = app.faults.spend_quota()
        if not allowed:
            # The quota is spent: 429 without Retry-After; X-RateLimit-Reset says when.
            app.count(key, "429")
            return self._send(429, quota_headers, error_body("rate_limited", "Request quota exhausted."),
                              count_bytes=app.count_bytes)
        if action == "rate_limit":
            wait = settings["retry_after"]
            status, headers = 429, [("Retry-After", str(wait))]
            out = error_body("rate_limited", f"Too many requests; retry in {wait} s." if isinstance(wait, int)
                             else f"Too many requests; retry after {wait}.")
        elif action == "error":
            status = settings["error_status"]
            headers = [("Retry-After", str(settings["retry_after"]))] if status == 503 else []
            out = error_body(ERROR_CODES.get(status, "server_error"), "Injected failure.")
        elif action == "malformed":
            status, headers, out = 200, [], MALFORMED_BODIES[n % len(MALFORMED_BODIES)]
        else:
            status, headers, out = app.api.handle(self.command, path, query, body, self.headers)
        app.count(key, str(status))
        self._send(status, headers + quota_headers, out, truncate=action == "truncate" and bool(out), count_bytes=app.count_bytes)

    def _control(self, path, query, body):
        app, feed = self.server.app, self.server.app.feed
        if not ipaddress.ip_address(self.client_address[0]).is_loopback:
            return self._send(403, [], error_body("forbidden", "Control endpoints are loopback-only."))
        params = {k: v[0] for k, v in parse_qs(query, keep_blank_values=True).items()}
        route = (self.command, path)
        bad = lambda message: self._send(400, [], error_body("bad_request", message))
        if route in {("POST", "/_control/edit"), ("POST", "/_control/delete")}:
            m = re.fullmatch(r"p([0-9]{7,})", params.get("id", ""))
            i = int(m.group(1)) if m and post_id(int(m.group(1))) == params["id"] else 0
            head = (feed.edit if path.endswith("edit") else feed.delete)(i)
            if head is None:
                return self._send(404, [], error_body("not_found", f"No live post {params.get('id')!r}."))
            result = {("edited" if path.endswith("edit") else "deleted"): params["id"], "head": head}
        elif route == ("POST", "/_control/corrupt"):
            m = re.fullmatch(r"p([0-9]{7,})", params.get("id", ""))
            i = int(m.group(1)) if m and post_id(int(m.group(1))) == params["id"] else 0
            if feed.corrupt(i, params.get("field", ""), params.get("value", "")) is None:
                return self._send(404, [], error_body("not_found", f"No live post {params.get('id')!r} with that field."))
            result = {"corrupted": params["id"], "field": params.get("field")}
        elif route == ("POST", "/_control/append"):
            raw = params.get("count", "1")
            if not re.fullmatch(r"[0-9]{1,8}", raw):
                return bad("count must be a non-negative integer.")
            live, head = feed.append(int(raw))
            result = {"appended": int(raw), "posts": live, "head": head}
        elif route == ("GET", "/_control/stats"):
            with app.stats_lock:
                requests = {k: dict(v) for k, v in app.stats.items()}
                bytes_sent = app.bytes_sent
            result = {"posts": feed.live_count(), "head": feed.head,
                      "total_requests": sum(sum(v.values()) for v in requests.values()), "requests": requests}
            if "bytes_sent" in params:      # opt-in, so the default answer keeps its exact shape
                result["bytes_sent"] = bytes_sent
        elif route == ("POST", "/_control/reset-stats"):
            with app.stats_lock:
                app.stats = {}
                app.bytes_sent = 0
                app.recent.clear()
            result = {"reset": True}
        elif route == ("GET", "/_control/requests"):
            with app.stats_lock:
                recent = list(app.recent)
            result = {"requests": [{"t": t, "request": key, "status": status} for t, key, status in recent]}
        elif route == ("POST", "/_control/hold"):
            raw = params.get("after", "0")
            if not re.fullmatch(r"[0-9]{1,8}", raw):
                return bad("after must be a non-negative integer.")
            result = app.set_hold(int(raw))
        elif route == ("GET", "/_control/avatars"):
            with app.stats_lock:
                result = {"requests": list(app.avatar_requests)}
        elif route == ("GET", "/_control/hold"):
            result = app.hold_state()
        elif route == ("POST", "/_control/release"):
            result = app.release()
        elif route == ("GET", "/_control/snapshot"):
            result = feed.snapshot()
        elif path == "/_control/echo":
            try:
                result = app.echo.control(self.command, body)
            except (ValueError, UnicodeDecodeError) as e:
                return bad(str(e))
        elif route == ("GET", "/_control/faults"):
            result = {"faults": app.faults.settings}
        elif route == ("POST", "/_control/faults"):
            try:
                settings = json.loads(body or b"{}")
                if not isinstance(settings, dict):
                    raise ValueError("expected a JSON object")
                result = {"faults": app.faults.set(settings)}
            except ValueError as e:
                return bad(f"Bad fault settings: {e}")
        else:
            return self._send(404, [], error_body("not_found", f"No such control endpoint: {self.command} {path}"))
        self._send(200, [], _json(result).encode())


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128      # benchmarks open many connections at once


class App:
    def __init__(self, args):
        with open(args.catalog, encoding="utf-8") as f:
            video_ids = [v["id"] for v in json.load(f)["videos"]]
        self.feed = Feed(args.posts, args.seed, video_ids)
        self.api = API(self.feed, args)
        self.faults = Faults(args.seed)
        self.echo = CredentialEcho(lambda message: {"error": {"code": message, "message": message}})
        self.stats, self.stats_lock = {}, threading.Lock()
        self.bytes_sent = 0                              # /v1/ response bytes: status line, headers, body
        self.recent = collections.deque(maxlen=10000)   # (time, key, status), for /_control/requests
        self.avatar_requests = []                       # --avatars-here: {host, path, authorization}, for /_control/avatars
        self.hold, self.hold_lock = None, threading.Lock()   # see set_hold

    def count(self, key, status):
        with self.stats_lock:
            per_status = self.stats.setdefault(key, {})
            per_status[status] = per_status.get(status, 0) + 1
            self.recent.append((time.time(), key, status))

    def count_bytes(self, n):
        with self.stats_lock:
            self.bytes_sent += n

    # A hold stops a client at a known page, so a test can act (a signal, another process) while
    # the client is certainly mid-sync, however fast or slow the machine is.

    def set_hold(self, after):
        """Lets `after` more GET /v1/feed requests through, then holds every later one until released."""
        with self.hold_lock:
            if self.hold is not None:
                self.hold["release"].set()
            self.hold = {"pass": after, "passed": 0, "held": 0, "release": threading.Event()}
            return self._hold_view()

    def pass_or_hold(self):
        with self.hold_lock:
            hold = self.hold
            if hold is None:
                return
            if hold["pass"] > 0:
                hold["pass"] -= 1
                hold["passed"] += 1
                return
            hold["held"] += 1
        hold["release"].wait(HOLD_LIMIT)
        with self.hold_lock:
            hold["held"] -= 1

    def hold_state(self):
        with self.hold_lock:
            return self._hold_view()

    def release(self):
        with self.hold_lock:
            if self.hold is not None:
                self.hold["release"].set()
            self.hold = None
            return {"released": True}

    def _hold_view(self):
        hold = self.hold
        if hold is None:
            return {"holding": False, "passed": 0, "held": 0}
        return {"holding": True, "passed": hold["passed"], "held": hold["held"]}


def dump(app, args):
    """Record a full client walk (login, refresh, every page, the idle tail) as files in args.dump."""
    feed, api = app.feed, app.api
    api.fixed_tokens = True
    picks = random.Random(f"dump:{args.seed}").sample(range(1, feed.max_id + 1), min(5, feed.max_id))
    for i in picks[:3]:
        feed.edit(i)
    for i in picks[3:]:
        feed.delete(i)
    os.makedirs(args.dump, exist_ok=True)
    for name in os.listdir(args.dump):       # drop pages of an earlier, longer recording
        if re.fullmatch(r"feed-[0-9]+\.json", name):
            os.remove(os.path.join(args.dump, name))
    responses = []

    def record(method, path, params, body, name, headers=None):
        query = urlencode(sorted(params.items()))
        status, extra, out = api.handle(method, path, query, body, headers or {})
        assert status == 200, (method, path, status, out)
        with open(os.path.join(args.dump, name), "wb") as f:
            f.write(out)
        responses.append({"request": f"{method} {path}" + (f"?{query}" if query else ""), "status": status,
                          "headers": {"Content-Type": "application/json", **dict(extra)}, "body": name})
        return out

    record("POST", "/v1/auth/login", {}, _json({"username": args.username, "password": args.password}).encode(),
           "login.json")
    record("POST", "/v1/auth/refresh", {}, b'{"refresh_token": "demo-refresh-token"}', "refresh.json")
    auth = {"Authorization": "Bearer demo-access-token"}
    params, page, has_more = {"limit": args.page_size}, 0, True
    while has_more:
        page += 1
        out = json.loads(record("GET", "/v1/feed", params, b"", f"feed-{page:03d}.json", auth))
        params, has_more = {"cursor": out["next_cursor"], "limit": args.page_size}, out["has_more"]
    record("GET", "/v1/feed", params, b"", f"feed-{page + 1:03d}.json", auth)  # the idle poll at the head
    with open(os.path.join(args.dump, "index.json"), "w", encoding="utf-8") as f:
        json.dump({"responses": responses}, f, indent=1)
        f.write("\n")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description="Reference backend for the feedsync HTTP API.")
    p.add_argument("--port", type=int, default=8080, help="TCP port on 127.0.0.1; 0 picks a free one")
    p.add_argument("--posts", type=int, default=1000, help="posts in the initial feed")
    p.add_argument("--seed", type=int, default=1, help="seed for the data and the fault decisions")
    p.add_argument("--page-size", type=int, default=100, help="limit used when a request has none (1-1000)")
    p.add_argument("--username", default="demo")
    p.add_argument("--password", default="demo")
    p.add_argument("--users", type=int, default=1, help="accounts: USERNAME, then USERNAME2 … USERNAMEN (1-1000)")
    p.add_argument("--token-ttl", type=int, default=900, help="access token lifetime in seconds")
    p.add_argument("--catalog", default=os.path.join(here, "..", "videos", "catalog.json"),
                   help="video catalog whose ids posts refer to")
    p.add_argument("--dump", metavar="DIR", help="write a recorded client walk into DIR and exit")
    p.add_argument("--warm", action="store_true", help="generate every post before listening")
    p.add_argument("--avatars-here", action="store_true",
                   help="serve the authors' avatars from this server: behind the token, or redirected to another origin")
    p.add_argument("--exit-on-stdin-eof", action="store_true",
                   help="exit when standard input closes (tests pass a pipe, so the server dies with its test)")
    args = p.parse_args()
    if not 1 <= args.page_size <= MAX_LIMIT or args.posts < 0 or args.token_ttl < 0 or not 1 <= args.users <= 1000:
        p.error("need --page-size in 1..1000, --posts >= 0, --token-ttl >= 0 and --users in 1..1000")

    def stop(signum, frame):
        os._exit(0)   # a fixture: no state to save, and handler threads must not keep it alive

    # A parent's blocked signals are inherited (Foundation's Process spawns from threads that
    # block most of them); unblock so SIGTERM and SIGINT reach this process.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    signal.signal(signal.SIGTERM, stop)
    if args.exit_on_stdin_eof:
        def watch_stdin():
            while sys.stdin.buffer.read(4096):
                pass
            os._exit(0)
        threading.Thread(target=watch_stdin, daemon=True).start()
    try:
        app = App(args)
        if args.dump:
            return dump(app, args)
        server = Server(("127.0.0.1", args.port), Handler)
        server.app = app
        if args.avatars_here:
            app.feed.place_avatars(f"http://127.0.0.1:{server.server_address[1]}")
        if args.warm:
            app.feed.warm()
        try:
            print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
            server.serve_forever()
        finally:
            server.server_close()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
