#!/usr/bin/env python3
"""Hostile backend for feedsync's end-to-end tests.

Standard library only. One process speaks both the feedsync HTTP API (Integrations/HTTPAPI/API.md)
and the slice of the Mastodon API feedsync reads (verify_credentials and the home timeline), and
misbehaves in one way chosen by --mode: redirects to other origins, bodies that never end or are
far too large, compression bombs, slow drips, pagination cursors and Link headers that loop or are
malformed, terminal escape sequences in data, absurd numbers, and rate limits. See README.md.

    python3 Fixtures/hostile/server.py --port 0 --exit-on-stdin-eof --mode MODE [--target-port N] [--posts N]

The first line on stdout is `listening on 127.0.0.1:PORT`. Every mode also answers
GET /_control/stats and POST /_control/reset.
"""
import argparse
import bisect
import calendar
import json
import math
import os
import re
import signal
import socket
import struct
import sys
import threading
import time
import traceback
import zlib
from http.client import responses
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlencode, urlsplit

ACCESS_TOKEN = "hostile-access-token-SECRET1"
REFRESH_TOKEN = "hostile-refresh-token-SECRET2"
EXPIRES_IN = 3600

EPOCH = calendar.timegm((2026, 1, 1, 0, 0, 0))
API_STEP = 37                        # seconds between consecutive httpapi posts
T0_MS = EPOCH * 1000
MASTO_STEP_MS = 137_000              # milliseconds between consecutive Mastodon statuses
API_DEFAULT_LIMIT, API_MAX_LIMIT = 100, 1000
MASTO_DEFAULT_LIMIT, MASTO_MAX_LIMIT = 20, 40
CURSOR_PARAMS = ("max_id", "since_id", "min_id")
LINK_DROP = CURSOR_PARAMS + ("hop", "loop")   # never carried over into Link URLs
MAX_BODY = 1 << 20
MIB = 1 << 20
IDLE_TIMEOUT = 60                    # seconds a connection may sit idle or a write may block
DOMAIN = "hostile.example"
RECENT = 1000                        # requests kept in /_control/stats "recent"
AUTHORIZATIONS = 10000               # Authorization values kept in /_control/stats

# Terminal-hostile strings for `control-chars` (decoded JSON strings contain the raw characters).
ESCAPES = [
    "\x1b[2J",                                    # clear screen
    "\x1b]0;pwned\x07",                           # OSC: set the terminal title
    "\r",                                         # carriage return: overwrite the line
    "\x1b[1A",                                    # cursor up
    "\nAll good\n",                               # a fake log line
    "\u009b31m",                                  # C1 CSI (8-bit) + SGR red
    "\x1b[31mRED\x1b[0m",                         # colours
    "\x1b]8;;http://evil.example/\x07link\x1b]8;;\x07",   # OSC 8 hyperlink
    "\x08\x08\x08\x7f",                           # backspaces and DEL
    "\u202eevil\u202c",                           # right-to-left override (display spoof)
]
ESCAPE_ALL = "".join(ESCAPES)

_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def raw(literal):
    """A JSON literal written verbatim in place of this string (e.g. raw("1e300"))."""
    return "\ue000" + literal + "\ue001"


_RAW = re.compile('"\ue000([^"\ue001]*)\ue001"')
BIG = "\ue002"            # placeholder for a huge string, split out by split_big()


def dumps(obj):
    text = _json(obj)
    if "\ue000" in text:
        text = _RAW.sub(lambda m: m.group(1), text)
    return text.encode()


def split_big(obj):
    """(bytes before, bytes after) the BIG placeholder's content, quotes kept outside."""
    before, after = dumps(obj).split(BIG.encode(), 1)
    return before, after


def rfc3339(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def iso_ms(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def ruby_to_i(text):
    m = re.match(r"\s*([+-]?\d+)", text)
    return int(m.group(1)) if m else 0


# ---- data ------------------------------------------------------------------------------------

API_AUTHORS = [
    {"id": "u001", "handle": "ada", "display_name": "Ada Byron", "avatar_url": "https://avatars.example.com/u001.png"},
    {"id": "u002", "handle": "grace", "display_name": "Grace Hopper", "avatar_url": "https://avatars.example.com/u002.png"},
    {"id": "u003", "handle": "linus", "display_name": "Linus", "avatar_url": None},
    {"id": "u004", "handle": "noor", "display_name": "Noor", "avatar_url": "https://avatars.example.com/u004.png"},
]

# username, display name, account id
MASTO_ACCOUNTS = [("ada", "Ada Lovelace", "109302156482049563"), ("grace", "Grace Hopper", "109302156482049564"),
                  ("linus", "Linus", "109302156482049565"), ("noor", "Noor", "109302156482049566")]


def api_post(i):
    return {"id": f"p{i:07d}", "author": dict(API_AUTHORS[i % len(API_AUTHORS)]),
            "text": f"Hostile fixture post {i}.", "created_at": rfc3339(EPOCH + i * API_STEP),
            "edited_at": None, "reply_to": None,
            "counts": {"replies": i % 4, "reposts": i % 3, "likes": (i * 7) % 50}, "video_ids": []}


def api_page(posts, next_cursor, has_more):
    return {"changes": [{"op": "upsert", "post": p} for p in posts], "next_cursor": str(next_cursor),
            "has_more": has_more}


def masto_account(k):
    username, display, aid = MASTO_ACCOUNTS[k % len(MASTO_ACCOUNTS)]
    avatar = f"https://files.{DOMAIN}/accounts/avatars/{aid[:3]}/{aid[3:6]}/original/{int(aid) % 0xFFFFFFFF:08x}.png"
    return {"id": aid, "username": username, "acct": username, "display_name": display, "locked": False,
            "bot": False, "discoverable": True, "group": False, "created_at": "2022-11-07T00:00:00.000Z",
            "note": "<p>Hostile fixture account.</p>", "url": f"https://{DOMAIN}/@{username}",
            "uri": f"https://{DOMAIN}/users/{username}", "avatar": avatar, "avatar_static": avatar,
            "header": f"https://{DOMAIN}/headers/original/missing.png",
            "header_static": f"https://{DOMAIN}/headers/original/missing.png",
            "followers_count": 10 + k, "following_count": 20 + k, "statuses_count": 1000 + k,
            "last_status_at": "2026-01-01", "emojis": [], "fields": []}


def masto_sid(i):
    """Snowflake-style id of Mastodon status i (1-based, increasing with i): 18 digits."""
    return ((T0_MS + i * MASTO_STEP_MS) << 16) | (i & 0xFFFF)


def masto_status(i):
    sid = str(masto_sid(i))
    account = masto_account(i)
    user = account["username"]
    return {"id": sid, "created_at": iso_ms(T0_MS + i * MASTO_STEP_MS), "in_reply_to_id": None,
            "in_reply_to_account_id": None, "sensitive": False, "spoiler_text": "", "visibility": "public",
            "language": "en", "uri": f"https://{DOMAIN}/users/{user}/statuses/{sid}",
            "url": f"https://{DOMAIN}/@{user}/{sid}", "replies_count": i % 4, "reblogs_count": i % 3,
            "favourites_count": (i * 7) % 50, "edited_at": None, "favourited": False, "reblogged": False,
            "muted": False, "bookmarked": False, "content": f"<p>Hostile fixture status {i}.</p>", "filtered": [],
            "reblog": None, "application": {"name": "Web", "website": None}, "account": account,
            "media_attachments": [], "mentions": [], "tags": [], "emojis": [], "card": None, "poll": None}


def video_attachment(i, duration=88.654, width=1280, frame_rate="30000/1001", url=None):
    mid = str(masto_sid(i) - 1000)
    files = f"https://files.{DOMAIN}/media_attachments/files/{mid[:3]}/{mid[3:6]}/{mid[6:9]}"
    return {"id": mid, "type": "video", "url": url or f"{files}/original/{mid}.mp4",
            "preview_url": f"{files}/small/{mid}.png", "remote_url": None, "preview_remote_url": None,
            "meta": {"length": "0:01:28.65", "duration": 88.65, "fps": 30, "size": "1280x720", "width": 1280,
                     "height": 720, "aspect": 1.7777777777777777,
                     "original": {"width": width, "height": 720, "frame_rate": frame_rate, "duration": duration,
                                  "bitrate": 862056},
                     "small": {"width": 400, "height": 225, "size": "400x225", "aspect": 1.7777777777777777}},
            "description": "A hostile video", "blurhash": "U58E0g8_0M.94T?bIr00?bD%NGoM?bD%oLt7"}


# ---- requests and replies --------------------------------------------------------------------

class Request:
    def __init__(self, method, target, headers, body):
        url = urlsplit(target)
        self.method, self.target, self.path, self.query = method, target, url.path, url.query
        self.headers, self.body = headers, body
        self.pairs = parse_qsl(url.query, keep_blank_values=True)
        self.params = dict(self.pairs)               # last value wins

    @property
    def key(self):
        return f"{self.method} {self.path}"


class Reply:
    """status, headers and either body bytes or a stream (an iterable of byte chunks).

    A stream with `length` is sent with that Content-Length; without, chunked. Streams are cut off
    at --stream-limit seconds or when the client goes away.
    """

    def __init__(self, status, body=b"", headers=(), stream=None, length=None, close=False,
                 content_type="application/json; charset=utf-8"):
        self.status, self.body, self.headers = status, body, list(headers)
        self.stream, self.length, self.close, self.content_type = stream, length, close, content_type


def json_reply(status, obj, headers=()):
    return Reply(status, dumps(obj), headers)


def api_error(status, code, message, headers=()):
    return json_reply(status, {"error": {"code": code, "message": message}}, headers)


def masto_error(status, message, headers=()):
    return json_reply(status, {"error": message}, headers)


# ---- modes -----------------------------------------------------------------------------------

MODES = {}


def mode(name, summary):
    """Registers a mode class under `name` (and a one-line summary for --help)."""
    def register(cls):
        cls.name, cls.summary = name, summary
        MODES[name] = cls
        return cls
    return register


# path -> (method, handler name, protocol); a mode may extend its class attribute `routes`
ROUTES = {
    "/v1/auth/login": ("POST", "login", "api"),
    "/v1/auth/refresh": ("POST", "refresh", "api"),
    "/v1/feed": ("GET", "feed", "api"),
    "/api/v1/accounts/verify_credentials": ("GET", "verify", "mastodon"),
    "/api/v1/timelines/home": ("GET", "home", "mastodon"),
}
NEEDS_BEARER = {"feed", "verify", "home"}


@mode("normal", "both protocols, well behaved")
class Normal:
    """Well-behaved answers; every other mode overrides one or more handlers."""

    routes = ROUTES

    def __init__(self, app):
        self.app, self.args = app, app.args
        self.n = app.args.posts
        self.sids = [masto_sid(i) for i in range(1, self.n + 1)]
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        """Re-arms one-shot behaviour (called by POST /_control/reset)."""

    @property
    def origin(self):
        return f"http://127.0.0.1:{self.app.port}"

    # -- dispatch --

    def dispatch(self, req):
        route = self.routes.get(req.path)
        if route is None:
            return self.not_found(req)
        method, name, protocol = route
        if req.method != method:
            if protocol == "api":
                return api_error(405, "method_not_allowed", f"Use {method} {req.path}.", [("Allow", method)])
            return masto_error(404, "Record not found")
        if name in NEEDS_BEARER and not self.bearer(req):
            if protocol == "api":
                return api_error(401, "unauthorized", "Missing bearer token.")
            return masto_error(401, "The access token is invalid")
        reply = getattr(self, name)(req)
        if protocol == "mastodon":
            have = {k.lower() for k, _ in reply.headers}
            reply.headers += [h for h in self.masto_rate_headers(req, reply) if h[0].lower() not in have]
        return reply

    @staticmethod
    def bearer(req):
        scheme, _, token = (req.headers.get("Authorization") or "").strip().partition(" ")
        return scheme.lower() == "bearer" and token.strip() != ""

    def not_found(self, req):
        if req.path.startswith("/api/"):
            return masto_error(404, "Record not found")
        return api_error(404, "not_found", f"No such endpoint: {req.path}")

    def masto_rate_headers(self, req, reply):
        reset = iso_ms(int((time.time() + 300) * 1000))
        return [("X-RateLimit-Limit", "300"), ("X-RateLimit-Remaining", "299"), ("X-RateLimit-Reset", reset)]

    # -- httpapi --

    def token_body(self, expires_in=EXPIRES_IN):
        return {"access_token": ACCESS_TOKEN, "refresh_token": REFRESH_TOKEN, "token_type": "Bearer",
                "expires_in": expires_in}

    def login(self, req):
        return json_reply(200, self.token_body())

    refresh = login

    def api_query(self, req):
        """(cursor int, limit int, None) or (None, None, error reply)."""
        raw_cursor, raw_limit = req.params.get("cursor", ""), req.params.get("limit", "")
        if raw_cursor == "":
            cursor = 0
        elif raw_cursor.isdigit() and int(raw_cursor) <= self.n:
            cursor = int(raw_cursor)
        else:
            return None, None, api_error(400, "bad_cursor", f"Unknown cursor {raw_cursor!r}.")
        if raw_limit == "":
            limit = API_DEFAULT_LIMIT
        elif raw_limit.isdigit() and 1 <= int(raw_limit) <= API_MAX_LIMIT:
            limit = int(raw_limit)
        else:
            return None, None, api_error(400, "bad_limit", "limit must be 1...1000.")
        return cursor, limit, None

    def api_post(self, i):
        return api_post(i)

    def feed_page(self, req, cursor, limit):
        """The normal page after `cursor`: (page dict, next cursor)."""
        last = min(self.n, cursor + limit)
        posts = [self.api_post(i) for i in range(cursor + 1, last + 1)]
        return api_page(posts, last, last < self.n), last

    def feed(self, req):
        cursor, limit, error = self.api_query(req)
        if error:
            return error
        page, next_cursor = self.feed_page(req, cursor, limit)
        etag = f'"v{next_cursor}"'
        if not page["changes"] and req.headers.get("If-None-Match") == etag:
            return Reply(304, None, [("ETag", etag)])
        return json_reply(200, page, [("ETag", etag)])

    # -- Mastodon --

    def verify(self, req):
        account = masto_account(0)
        account["source"] = {"privacy": "public", "sensitive": False, "language": "en", "note": "Hostile fixture.",
                             "fields": [], "follow_requests_count": 0}
        account["role"] = {"id": "-99", "name": "", "permissions": "65536", "color": "", "highlighted": False}
        return json_reply(200, account)

    def masto_select(self, req, cap=None):
        """(status numbers newest first, None) for the request's limit/max_id/since_id/min_id, or (None, 400)."""
        limit = MASTO_DEFAULT_LIMIT
        if req.params.get("limit", "") != "":
            limit = min(abs(ruby_to_i(req.params["limit"])), MASTO_MAX_LIMIT)
        if cap is not None:
            limit = min(limit, cap)
        cursors = {}
        for name in CURSOR_PARAMS:
            value = req.params.get(name, "")
            if value == "":
                continue
            if not value.isdigit():
                return None, masto_error(400, f"{name} must be a numeric id")
            cursors[name] = int(value)
        sids = self.sids
        hi = bisect.bisect_left(sids, cursors["max_id"]) if "max_id" in cursors else len(sids)
        if "min_id" in cursors:
            lo = bisect.bisect_right(sids, cursors["min_id"])
            chosen = range(lo, min(lo + limit, hi)) if lo < hi else range(0)
        else:
            lo = bisect.bisect_right(sids, cursors["since_id"]) if "since_id" in cursors else 0
            chosen = range(max(lo, hi - limit), hi) if lo < hi else range(0)
        return [k + 1 for k in reversed(chosen)], None

    def masto_status(self, i):
        return masto_status(i)

    def link_url(self, req, cursor, value, port=None, extra=""):
        others = [(k, v) for k, v in req.pairs if k not in LINK_DROP]
        return (f"http://127.0.0.1:{port or self.app.port}{req.path}?"
                + urlencode(others + [(cursor, str(value))]) + extra)

    def links(self, req, numbers):
        """The Link header value for a page of statuses (newest first), or None for an empty page."""
        if not numbers:
            return None
        nxt = self.link_url(req, "max_id", masto_sid(numbers[-1]))
        prev = self.link_url(req, "min_id", masto_sid(numbers[0]))
        return f'<{nxt}>; rel="next", <{prev}>; rel="prev"'

    def timeline_items(self, req, numbers):
        return [self.masto_status(i) for i in numbers]

    def home(self, req, cap=None):
        numbers, error = self.masto_select(req, cap)
        if error:
            return error
        link = self.links(req, numbers)
        return json_reply(200, self.timeline_items(req, numbers), [("Link", link)] if link else [])

    # -- helpers for modes --

    def same_origin_location(self, req, path_and_query):
        host = req.headers.get("Host") or ""
        if not re.fullmatch(rf"(127\.0\.0\.1|localhost|\[::1\]):{self.app.port}", host):
            host = f"127.0.0.1:{self.app.port}"
        return f"http://{host}{path_and_query}"

    def redirect(self, status, location):
        return Reply(status, dumps({"redirect": location}), [("Location", location)])


@mode("catcher", "200 [] / an empty httpapi page for everything; records Authorization (a redirect target)")
class Catcher(Normal):
    def dispatch(self, req):
        if req.path.startswith("/v1/"):
            return json_reply(200, api_page([], 0, False))
        return Reply(200, b"[]")


class CrossRedirect(Normal):
    host = "127.0.0.1"

    def feed(self, req):
        location = f"http://{self.host}:{self.args.target_port}{req.target}"
        return self.redirect(self.args.redirect_status or 301, location)

    home = feed


@mode("redirect-cross-origin", "feed and home redirect to http://127.0.0.1:TARGET-PORT/same/path?query")
class RedirectCrossOrigin(CrossRedirect):
    host = "127.0.0.1"


@mode("redirect-cross-host", "feed and home redirect to http://localhost:TARGET-PORT/same/path?query")
class RedirectCrossHost(CrossRedirect):
    host = "localhost"


@mode("redirect-same-origin", "feed and home without hop=1 redirect (302) to themselves plus hop=1")
class RedirectSameOrigin(Normal):
    def feed(self, req):
        if req.params.get("hop") == "1":
            return Normal.feed(self, req)
        target = req.target + ("&" if req.query else "?") + "hop=1"
        return self.redirect(self.args.redirect_status or 302, self.same_origin_location(req, target))

    def home(self, req):
        if req.params.get("hop") == "1":
            return Normal.home(self, req)
        target = req.target + ("&" if req.query else "?") + "hop=1"
        return self.redirect(self.args.redirect_status or 302, self.same_origin_location(req, target))


@mode("redirect-loop", "feed and home redirect (302) to themselves with loop=N+1, forever")
class RedirectLoop(Normal):
    def feed(self, req):
        n = ruby_to_i(req.params.get("loop", "0")) + 1
        query = urlencode([(k, v) for k, v in req.pairs if k != "loop"] + [("loop", str(n))])
        return self.redirect(self.args.redirect_status or 302, self.same_origin_location(req, f"{req.path}?{query}"))

    home = feed


@mode("redirect-post", "POST /v1/auth/login answers 307 to /v1/auth/login2 (which would log in)")
class RedirectPost(Normal):
    routes = {**ROUTES, "/v1/auth/login2": ("POST", "login2", "api")}

    def login(self, req):
        return self.redirect(307, self.same_origin_location(req, "/v1/auth/login2"))

    def login2(self, req):
        return Normal.login(self, req)


class Streaming(Normal):
    """Modes whose feed and home bodies are built around one huge JSON string."""

    def api_document(self):
        post = api_post(1)
        post["text"] = BIG
        return api_page([post], 1, False)

    def masto_document(self):
        status = masto_status(self.n or 1)
        status["content"] = BIG
        return [status]


def endless_chunks(prefix):
    yield prefix
    chunk = (b"hostile " * 8192)             # 64 KiB of JSON string content
    while True:
        yield chunk


@mode("endless-body", "feed and home: 200, chunked, a JSON prefix then endless 64 KiB chunks inside a string")
class EndlessBody(Streaming):
    def feed(self, req):
        return Reply(200, stream=endless_chunks(split_big(self.api_document())[0]), close=True)

    def home(self, req):
        return Reply(200, stream=endless_chunks(split_big(self.masto_document())[0]), close=True)


def sized_chunks(prefix, size, fill, suffix):
    yield prefix
    block = fill * MIB
    left = size
    while left > 0:
        n = min(MIB, left)
        yield block if n == MIB else block[:n]
        left -= n
    yield suffix


@mode("huge-body", "feed and home: 200, Content-Length ~200 MiB, a valid document with one 200 MiB string")
class HugeBody(Streaming):
    def huge(self, document):
        before, after = split_big(document)
        size = self.args.body_mib * MIB
        return Reply(200, stream=sized_chunks(before, size, b"a", after), length=len(before) + size + len(after),
                     close=True)

    def feed(self, req):
        return self.huge(self.api_document())

    def home(self, req):
        return self.huge(self.masto_document())


def _gf2_times(matrix, vector):
    total, row = 0, 0
    while vector:
        if vector & 1:
            total ^= matrix[row]
        vector >>= 1
        row += 1
    return total


def crc32_combine(crc1, crc2, len2):
    """zlib's crc32_combine: the CRC-32 of A+B from crc32(A), crc32(B) and len(B)."""
    if len2 <= 0:
        return crc1
    odd = [0xEDB88320] + [1 << k for k in range(31)]      # the operator for one zero bit
    square = lambda m: [_gf2_times(m, v) for v in m]
    even = square(odd)                                      # two zero bits
    odd = square(even)                                      # four zero bits
    while True:                                             # apply len2 zero bytes to crc1
        even = square(odd)
        if len2 & 1:
            crc1 = _gf2_times(even, crc1)
        len2 >>= 1
        if not len2:
            break
        odd = square(even)
        if len2 & 1:
            crc1 = _gf2_times(odd, crc1)
        len2 >>= 1
        if not len2:
            break
    return crc1 ^ crc2


def adler32_combine(adler1, adler2, len2):
    """zlib's adler32_combine: the Adler-32 of A+B from adler32(A), adler32(B) and len(B)."""
    base = 65521
    rem = len2 % base
    sum1 = ((adler1 & 0xFFFF) + (adler2 & 0xFFFF) + base - 1) % base
    sum2 = (rem * (adler1 & 0xFFFF) + (adler1 >> 16) + (adler2 >> 16) + base - rem) % base
    return sum1 | (sum2 << 16)


def check_value(prefix, block, count, suffix, checksum, combine):
    """checksum(prefix + block * count + suffix) without building it: the repeated block's
    value is doubled up with `combine` (log2(count) steps)."""
    value = checksum(prefix)
    power, power_len = checksum(block), len(block)
    while count:
        if count & 1:
            value = combine(value, power, power_len)
        count >>= 1
        if count:
            power, power_len = combine(power, power, power_len), power_len * 2
    return combine(value, checksum(suffix), len(suffix))


def deflate_bomb(prefix, suffix, mib, container):
    """prefix + mib MiB of spaces + suffix, compressed as gzip or zlib ("deflate") without ever
    holding or compressing the inflated text: one 1 MiB block is compressed after a full flush
    (so its bytes do not depend on what came before) and repeated."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = b" " * MIB
    head = c.compress(prefix) + c.flush(zlib.Z_FULL_FLUSH)
    middle = c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
    assert middle == again, "a full flush should make every block compress alike"
    tail = c.compress(suffix) + c.flush(zlib.Z_FINISH)
    body = head + middle * mib + tail
    size = len(prefix) + mib * MIB + len(suffix)
    if container == "gzip":
        crc = check_value(prefix, block, mib, suffix, zlib.crc32, crc32_combine)
        return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + body + struct.pack("<II", crc, size & 0xFFFFFFFF)
    adler = check_value(prefix, block, mib, suffix, zlib.adler32, adler32_combine)
    return b"\x78\xda" + body + struct.pack(">I", adler)


@mode("gzip-bomb", "feed and home: 200, Content-Encoding: gzip, ~1 MB inflating to 1 GiB (spaces in a string)")
class GzipBomb(Streaming):
    container, encoding = "gzip", "gzip"

    def __init__(self, app):
        super().__init__(app)
        mib = self.args.bomb_mib
        self.bombs = {"api": deflate_bomb(*split_big(self.api_document()), mib, self.container),
                      "mastodon": deflate_bomb(*split_big(self.masto_document()), mib, self.container)}

    def feed(self, req):
        return Reply(200, self.bombs["api"], [("Content-Encoding", self.encoding)])

    def home(self, req):
        return Reply(200, self.bombs["mastodon"], [("Content-Encoding", self.encoding)])


@mode("deflate-bomb", "as gzip-bomb with Content-Encoding: deflate (zlib format)")
class DeflateBomb(GzipBomb):
    container, encoding = "zlib", "deflate"     # HTTP's "deflate" is the zlib format (RFC 9110)


def drip(body):
    for k in range(len(body)):
        if k:
            time.sleep(1)
        yield body[k:k + 1]


@mode("slow-drip", "feed and home: 200 with the normal page's Content-Length, sent 1 byte per second")
class SlowDrip(Normal):
    def slow(self, reply):
        if reply.status != 200 or reply.stream is not None:
            return reply
        return Reply(200, stream=drip(reply.body), length=len(reply.body), headers=reply.headers, close=True)

    def feed(self, req):
        return self.slow(Normal.feed(self, req))

    def home(self, req):
        return self.slow(Normal.home(self, req))


def posts_after(n, cursor, count):
    """`count` post numbers after `cursor`, wrapping around the feed of n posts."""
    return [((cursor + k) % n) + 1 for k in range(count)] if n else []


@mode("cursor-repeat", "httpapi next_cursor is always the request's (first page: \"10\"); Mastodon next = the URL requested")
class CursorRepeat(Normal):
    def feed(self, req):
        raw_cursor = req.params.get("cursor", "")
        next_cursor = raw_cursor or "10"
        start = int(raw_cursor) if raw_cursor.isdigit() else 0
        page = api_page([api_post(i) for i in posts_after(self.n, start, 2)], next_cursor, True)
        return json_reply(200, page, [("ETag", f'"v{next_cursor}"')])

    def home(self, req):
        numbers, error = self.masto_select(req, cap=2)
        if error:
            return error
        if not numbers:
            numbers = list(range(self.n, max(self.n - 2, 0), -1))
        prev = self.link_url(req, "min_id", masto_sid(numbers[0])) if numbers else self.origin + req.target
        return json_reply(200, [masto_status(i) for i in numbers],
                          [("Link", f'<{self.origin}{req.target}>; rel="next", <{prev}>; rel="prev"')])


API_CYCLE = {"": "10", "0": "10", "10": "20", "20": "5", "5": "10"}


@mode("cursor-cycle", "httpapi next_cursor 0->10->20->5->10->20->5...; Mastodon next max_id cycles over three ids")
class CursorCycle(Normal):
    def feed(self, req):
        raw_cursor = req.params.get("cursor", "")
        next_cursor = API_CYCLE.get(raw_cursor, "10")
        start = int(raw_cursor) if raw_cursor.isdigit() else 0
        page = api_page([api_post(i) for i in posts_after(self.n, start, 5)], next_cursor, True)
        return json_reply(200, page, [("ETag", f'"v{next_cursor}"')])

    def cycle(self):
        """The three max_id values: the 10th, 20th and 5th newest statuses' ids."""
        return [masto_sid(max(1, self.n - k + 1)) for k in (10, 20, 5)]

    def home(self, req):
        numbers, error = self.masto_select(req, cap=5)
        if error:
            return error
        a, b, c = self.cycle()
        nxt = {str(a): b, str(b): c, str(c): a}.get(req.params.get("max_id", ""), a)
        link = (f'<{self.link_url(req, "max_id", nxt)}>; rel="next", '
                f'<{self.link_url(req, "min_id", masto_sid(numbers[0]) if numbers else 0)}>; rel="prev"')
        return json_reply(200, [masto_status(i) for i in numbers], [("Link", link)])


@mode("link-same-forward", "Mastodon: backward walk normal; any min_id request gets a full page whose rel=prev is the URL requested")
class LinkSameForward(Normal):
    def home(self, req):
        if req.params.get("min_id", "") == "":
            return Normal.home(self, req)
        _, error = self.masto_select(req)
        if error:
            return error
        limit = MASTO_DEFAULT_LIMIT
        if req.params.get("limit", "") != "":
            limit = min(abs(ruby_to_i(req.params["limit"])), MASTO_MAX_LIMIT)
        numbers = list(range(self.n, max(self.n - max(limit, 1), 0), -1))     # the newest `limit`, never empty
        nxt = self.link_url(req, "max_id", masto_sid(numbers[-1])) if numbers else self.origin + req.target
        return json_reply(200, [masto_status(i) for i in numbers],
                          [("Link", f'<{nxt}>; rel="next", <{self.origin}{req.target}>; rel="prev"')])


@mode("link-huge", "Mastodon home: a ~200 KB Link header of junk link-values, the valid next/prev last")
class LinkHuge(Normal):
    def links(self, req, numbers):
        valid = Normal.links(self, req, numbers)
        parts, size, k = [], 0, 0
        while size < self.args.link_bytes:
            part = f'<{self.origin}/junk/{k}?pad=xxxxxxxxxxxxxxxx>; rel="junk{k}"'
            parts.append(part)
            size += len(part) + 2
            k += 1
        if valid:
            parts.append(valid)
        return ", ".join(parts)


@mode("link-commas", "Mastodon home: valid Link whose URLs carry x=a,b (unencoded commas); such URLs are accepted")
class LinkCommas(Normal):
    def links(self, req, numbers):
        if not numbers:
            return None
        nxt = self.link_url(req, "max_id", masto_sid(numbers[-1]), extra="&x=a,b")
        prev = self.link_url(req, "min_id", masto_sid(numbers[0]), extra="&x=a,b")
        return f'<{nxt}>; rel="next", <{prev}>; rel="prev"'

    def link_url(self, req, cursor, value, port=None, extra=""):
        others = [(k, v) for k, v in req.pairs if k not in LINK_DROP + ("x",)]
        return f"http://127.0.0.1:{self.app.port}{req.path}?" + urlencode(others + [(cursor, str(value))]) + extra


@mode("link-malformed", "Mastodon home: Link values that are garbage (unterminated <, missing >, unquoted rel, ...)")
class LinkMalformed(Normal):
    def links(self, req, numbers):
        base = f"{self.origin}{req.path}"
        oldest = masto_sid(numbers[-1]) if numbers else 0
        newest = masto_sid(numbers[0]) if numbers else 0
        return ", ".join([
            "<not a url",
            f'<{base}?max_id={oldest}; rel="next"',            # missing >
            f"<{base}?max_id={oldest}>; rel=next",              # rel without quotes
            '; rel="next"',                                       # no target
            '<>; rel="next"',                                     # empty target
            f'<{base}?min_id={newest}>; rel="prev',             # unterminated quote
            '<http://exa mple.com/a b>; rel="next"',            # spaces in the URL
            '<%%%>; rel="next"',
            f'rel="next"; <{base}?max_id={oldest}>',            # parameters before the target
            '<<<>>>; rel="next"',
            '<javascript:alert(1)>; rel="prev"',
            ",,,",
            f'<{base}?max_id={oldest}>; rel=',                  # empty rel
        ])


@mode("link-other-port", "Mastodon home: rel=next points to http://127.0.0.1:TARGET-PORT (rel=prev stays here)")
class LinkOtherPort(Normal):
    def links(self, req, numbers):
        if not numbers:
            return None
        nxt = self.link_url(req, "max_id", masto_sid(numbers[-1]), port=self.args.target_port)
        prev = self.link_url(req, "min_id", masto_sid(numbers[0]))
        return f'<{nxt}>; rel="next", <{prev}>; rel="prev"'


@mode("control-chars", "terminal escapes in texts, handles, names, some ids and error messages; one 503 with escapes")
class ControlChars(Normal):
    def reset(self):
        self.failed = {"api": False, "mastodon": False}

    def once(self, which):
        with self.lock:
            fired, self.failed[which] = self.failed[which], True
            return not fired

    def api_post(self, i):
        post = api_post(i)
        post["text"] = f"Post {i} {ESCAPES[i % len(ESCAPES)]} end"
        if i % 3 == 0:
            post["author"]["handle"] = "eve\x1b[2J"
            post["author"]["display_name"] = "Eve\x1b]0;pwned\x07\r\x1b[1A\nAll good\n\u009b31m"
        if i % 7 == 3:
            post["id"] = f"p{i:07d}\x1b[1A\r"
        return post

    def feed(self, req):
        if req.params.get("cursor", "") != "" and self.once("api"):
            return api_error(503, "unavailable", "Maintenance" + ESCAPE_ALL, [("Retry-After", "1")])
        reply = Normal.feed(self, req)
        if reply.status == 200 and req.params.get("cursor", "") in ("", "0"):
            page = json.loads(reply.body)
            page["changes"].insert(0, {"op": "upsert", "post": {
                "id": "bad-\x1b[2J\x1b]0;pwned\x07\r\nAll good\n\u009b31m-id", "text": "missing author",
                "created_at": rfc3339(EPOCH)}})
            reply.body = dumps(page)
        return reply

    def masto_status(self, i):
        status = masto_status(i)
        status["content"] = f"<p>Status {i} {ESCAPES[i % len(ESCAPES)]} end</p>"
        if i % 4 == 1:
            status["spoiler_text"] = "cw \x1b[2J" + ESCAPES[(i + 1) % len(ESCAPES)]
        if i % 3 == 0:
            account = status["account"]
            account["username"] = "eve\x1b[2J"
            account["acct"] = "eve\x1b]0;pwned\x07@evil.example"
            account["display_name"] = "Eve\x1b]0;pwned\x07\r\x1b[1A\nAll good\n\u009b31m"
        if i % 7 == 3:
            status["id"] += "\x1b[1A\r"
        return status

    def home(self, req):
        cursored = any(req.params.get(name, "") != "" for name in CURSOR_PARAMS)
        if cursored and self.once("mastodon"):
            return masto_error(503, "Maintenance" + ESCAPE_ALL, [("Retry-After", "1")])
        return Normal.home(self, req)

    def timeline_items(self, req, numbers):
        items = Normal.timeline_items(self, req, numbers)
        if not any(req.params.get(name, "") != "" for name in CURSOR_PARAMS):
            items.insert(0, {"id": "bad-\x1b[2J\x1b]0;pwned\x07\r\nAll good\n\u009b31m-id",
                             "created_at": iso_ms(T0_MS), "content": "<p>missing account</p>"})
        return items


@mode("deep-json", "valid JSON nested 2,000 deep in an unknown field of post 2 and of the newest status")
class DeepJSON(Normal):
    DEEP = raw("[" * 2000 + "]" * 2000)

    def api_post(self, i):
        post = api_post(i)
        if i == 2:
            post["extra"] = self.DEEP
        return post

    def masto_status(self, i):
        status = masto_status(i)
        if i == self.n:
            status["extra"] = self.DEEP
        return status


@mode("big-numbers", "expires_in 1e16, counts 1e300/-5, 2026-02-30, media duration 1e300/-10, a numeric status id")
class BigNumbers(Normal):
    def token_body(self, expires_in=EXPIRES_IN):
        return Normal.token_body(self, raw("1e16"))

    def api_post(self, i):
        post = api_post(i)
        if i == 2:
            post["counts"]["likes"] = raw("1e300")
        elif i == 3:
            post["created_at"] = "2026-02-30T00:00:00Z"
        elif i == 4:
            post["counts"]["replies"] = -5
        return post

    def masto_status(self, i):
        status = masto_status(i)
        k = self.n - i             # 0 = newest
        if k == 1:
            status["media_attachments"] = [video_attachment(i, duration=raw("1e300"), width=raw("1e20"),
                                                            frame_rate="1e400/1")]
        elif k == 2:
            status["media_attachments"] = [video_attachment(i, duration=-10, url="javascript:alert(1)")]
        elif k == 3:
            status["replies_count"] = raw("1e300")
        elif k == 4:
            status["id"] = raw(status["id"])
        return status


@mode("rate-limit-httpapi", "the first GET /v1/feed answers 429 with Retry-After: 2 (and again until 2 s passed)")
class RateLimitHTTPAPI(Normal):
    def reset(self):
        self.until = None                 # time.time() before which feed answers 429

    def feed(self, req):
        now = time.time()
        with self.lock:
            if self.until is None:
                self.until = now + 2
            blocked = now < self.until
        if blocked:
            return self.limited(now)
        return Normal.feed(self, req)

    def limited(self, now):
        wait = max(1, math.ceil(self.until - now))
        return api_error(429, "rate_limited", f"Too many requests; retry in {wait} s.", [("Retry-After", str(wait))])


@mode("rate-limit-reset", "the first GET /v1/feed answers 429, no Retry-After, X-RateLimit-Remaining 0, Reset unix now+3")
class RateLimitReset(RateLimitHTTPAPI):
    def feed(self, req):
        now = time.time()
        with self.lock:
            if self.until is None:
                self.until = math.ceil(now + 3)
            blocked = now < self.until
        if blocked:
            return self.limited(now)
        return Normal.feed(self, req)

    def limited(self, now):
        return api_error(429, "rate_limited", "Request quota exhausted.",
                         [("X-RateLimit-Limit", "100"), ("X-RateLimit-Remaining", "0"),
                          ("X-RateLimit-Reset", str(self.until))])


@mode("rate-limit-mastodon", "Mastodon: the first home answer says Remaining 0, Reset now+3 s (ISO 8601); earlier requests get 429")
class RateLimitMastodon(Normal):
    def reset(self):
        self.until = None                 # window end (time.time()); None until the first home request
        self.used = 0

    def dispatch(self, req):
        now = time.time()
        with self.lock:
            armed_now = self.until is None and req.path == "/api/v1/timelines/home" and req.method == "GET"
            if armed_now:
                self.until = now + 3
            blocked = self.until is not None and not armed_now and now < self.until and req.path.startswith("/api/")
        if blocked:
            return masto_error(429, "Too many requests", self.window_headers(0))
        return Normal.dispatch(self, req)

    def window_headers(self, remaining, until=None):
        reset = iso_ms(int(math.ceil((until or self.until) * 1000)))
        return [("X-RateLimit-Limit", "300"), ("X-RateLimit-Remaining", str(remaining)), ("X-RateLimit-Reset", reset)]

    def masto_rate_headers(self, req, reply):
        with self.lock:
            if self.until is None:
                return []
            if time.time() < self.until:
                return self.window_headers(0)
            self.used += 1
            return self.window_headers(max(300 - self.used, 1), self.until + 300)


# ---- the server ------------------------------------------------------------------------------

class App:
    def __init__(self, args):
        self.args = args
        self.port = 0
        self.stream_limit = args.stream_limit
        self.stats_lock = threading.Lock()
        self.clear_stats()
        self.mode = MODES[args.mode](self)

    def clear_stats(self):
        with self.stats_lock:
            self.requests, self.statuses, self.authorization, self.recent = {}, {}, [], []
            self.bytes_sent = {}

    def arrived(self, req):
        with self.stats_lock:
            self.requests[req.key] = self.requests.get(req.key, 0) + 1
            auth = req.headers.get("Authorization")
            if auth is not None and len(self.authorization) < AUTHORIZATIONS:
                self.authorization.append(auth)

    def answered(self, req, status):
        with self.stats_lock:
            per = self.statuses.setdefault(req.key, {})
            per[str(status)] = per.get(str(status), 0) + 1
            self.recent.append({"request": f"{req.method} {req.target}", "status": status})
            del self.recent[:-RECENT]

    def sent(self, key, n):
        with self.stats_lock:
            self.bytes_sent[key] = self.bytes_sent.get(key, 0) + n

    def stats(self):
        with self.stats_lock:
            return {"mode": self.args.mode, "total_requests": sum(self.requests.values()),
                    "requests": dict(self.requests), "authorization": list(self.authorization),
                    "statuses": {k: dict(v) for k, v in self.statuses.items()}, "recent": list(self.recent),
                    "bytes_sent": dict(self.bytes_sent)}


class Disconnected(Exception):
    pass


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "feedsync-hostile/1"
    timeout = IDLE_TIMEOUT

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        self.counted = None
        body = self._read_body()
        if body is None:
            return
        app = self.server.app
        req = Request(self.command, self.path, self.headers, body)
        if req.path.startswith("/_control/"):
            return self._control(req)
        app.arrived(req)
        self.counted = req.key
        try:
            reply = app.mode.dispatch(req)
        except Exception:
            traceback.print_exc()
            reply = api_error(500, "internal_error", "The hostile fixture failed.")
        app.answered(req, reply.status)
        self._send(reply)

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def _read_body(self):
        # Always consume the body, or the next request on this keep-alive connection would be misread.
        length = self.headers.get("Content-Length") or "0"
        if self.headers.get("Transfer-Encoding") or not length.isdigit() or int(length) > MAX_BODY:
            self.close_connection = True
            self._send(api_error(400, "bad_request", "Need a Content-Length of at most 1 MiB, no chunking."))
            return None
        try:
            return self.rfile.read(int(length)) if length != "0" else b""
        except OSError:
            self.close_connection = True
            return None

    def _write(self, data):
        try:
            self.wfile.write(data)
        except OSError as e:          # BrokenPipe, ConnectionReset, timeout: the client went away
            raise Disconnected() from e
        if getattr(self, "counted", None):
            self.server.app.sent(self.counted, len(data))

    def _send(self, reply):
        lines = [f"HTTP/1.1 {reply.status} {responses.get(reply.status, 'Unknown')}"]
        chunked = False
        if reply.status not in (204, 304):
            lines.append(f"Content-Type: {reply.content_type}")
            if reply.stream is None:
                lines.append(f"Content-Length: {len(reply.body or b'')}")
            elif reply.length is not None:
                lines.append(f"Content-Length: {reply.length}")
            else:
                lines.append("Transfer-Encoding: chunked")
                chunked = True
        lines += [f"{name}: {value}" for name, value in reply.headers]
        if reply.close:
            self.close_connection = True
        if self.close_connection:
            lines.append("Connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        try:
            if reply.stream is None:
                self._write(head + (reply.body or b"") if reply.status not in (204, 304) else head)
                return
            self._write(head)
            deadline = time.monotonic() + self.server.app.stream_limit
            for chunk in reply.stream:
                if time.monotonic() >= deadline:
                    self.close_connection = True       # cut off mid-body
                    return
                self._write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
            if chunked:
                self._write(b"0\r\n\r\n")
        except Disconnected:
            self.close_connection = True
        finally:
            close = getattr(reply.stream, "close", None)
            if close:
                close()

    def _control(self, req):
        app = self.server.app
        route = (req.method, req.path)
        if route == ("GET", "/_control/stats"):
            return self._send(json_reply(200, app.stats()))
        if route in {("POST", "/_control/reset"), ("POST", "/_control/reset-stats")}:
            app.clear_stats()
            with app.mode.lock:
                app.mode.reset()
            return self._send(json_reply(200, {"reset": True}))
        self._send(json_reply(404, {"error": {"code": "not_found",
                                              "message": f"No such control endpoint: {req.method} {req.path}"}}))


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], OSError):
            return            # a client that went away: not worth a traceback
        super().handle_error(request, client_address)


def main():
    epilog = "modes:\n" + "\n".join(f"  {name:22} {cls.summary}" for name, cls in MODES.items())
    p = argparse.ArgumentParser(description="Hostile backend (feedsync HTTP API + Mastodon) for end-to-end tests.",
                                epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=8095, help="TCP port on 127.0.0.1; 0 picks a free one")
    p.add_argument("--mode", default="normal", choices=sorted(MODES), metavar="MODE", help="how to misbehave (below)")
    p.add_argument("--target-port", type=int, help="the other port for redirect-cross-*, link-other-port")
    p.add_argument("--posts", type=int, default=30, help="posts in the httpapi feed and statuses in the home timeline")
    p.add_argument("--redirect-status", type=int, choices=(301, 302, 303, 307, 308),
                   help="status of the redirect modes (default 301 cross-origin/host, 302 same-origin/loop)")
    p.add_argument("--stream-limit", type=float, default=120,
                   help="seconds after which endless-body, huge-body and slow-drip stop sending")
    p.add_argument("--body-mib", type=int, default=200, help="size of the huge-body string in MiB")
    p.add_argument("--bomb-mib", type=int, default=1024, help="inflated size of the bombs in MiB")
    p.add_argument("--link-bytes", type=int, default=200_000, help="size of the link-huge junk in bytes")
    p.add_argument("--exit-on-stdin-eof", action="store_true",
                   help="exit when standard input closes (tests pass a pipe, so the server dies with its test)")
    args = p.parse_args()
    if args.mode in ("redirect-cross-origin", "redirect-cross-host", "link-other-port") and not args.target_port:
        p.error(f"--mode {args.mode} needs --target-port")
    if args.posts < 0 or args.body_mib < 0 or args.bomb_mib < 0 or args.stream_limit <= 0:
        p.error("need --posts, --body-mib, --bomb-mib >= 0 and --stream-limit > 0")

    def stop(signum, frame):
        os._exit(0)   # a fixture: no state to save, and handler threads must not keep it alive

    # A parent's blocked signals are inherited (Foundation's Process spawns from threads that
    # block most of them); unblock so SIGTERM and SIGINT reach this process.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    signal.signal(signal.SIGTERM, stop)
    if args.exit_on_stdin_eof:
        def watch_stdin():
            try:
                while sys.stdin.buffer.read(4096):
                    pass
            finally:
                os._exit(0)
        threading.Thread(target=watch_stdin, daemon=True).start()
    try:
        app = App(args)
        server = Server(("127.0.0.1", args.port), Handler)
        server.app = app
        app.port = server.server_address[1]
        try:
            print(f"listening on 127.0.0.1:{app.port}", flush=True)
            server.serve_forever()
        finally:
            server.server_close()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
