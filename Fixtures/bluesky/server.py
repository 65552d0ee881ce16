#!/usr/bin/env python3
"""Fake Bluesky (AT Protocol) service for feedsync's Bluesky client (tests, demos, benchmarks).

Standard library only. Written from the lexicons (app.bsky.feed.*, app.bsky.embed.*,
app.bsky.richtext.facet, com.atproto.server.createSession/refreshSession) and docs.bsky.app:
it serves the six feed methods with opaque cursors, JWT sessions that expire (400 ExpiredToken),
rotating refresh tokens, and RateLimit-* headers over a real quota (429 RateLimitExceeded).
Control endpoints under /_control/ publish posts and reposts between syncs. See README.md.
"""
import argparse
import base64
import calendar
import ipaddress
import json
import os
import random
import signal
import socket
import sys
import threading
import time
from http.client import responses
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from credential_echo import CredentialEcho  # noqa: E402

T0 = calendar.timegm((2026, 1, 1, 0, 0, 0))
STEP_US = 60_000_000                 # entry i enters the timeline at T0 + i minutes
DEFAULT_LIMIT, MAX_LIMIT = 50, 100
MAX_BODY = 1 << 20
OWNER_DID = "did:plc:ownerowner0000000000000"
FEED_URI = "at://did:plc:feedmaker00000000000000/app.bsky.feed.generator/cats"
LIST_URI = f"at://{OWNER_DID}/app.bsky.graph.list/3kfriends0001"
CDN = "https://cdn.bsky.example"
VIDEO_BASE = "https://video.bsky.example"   # --video-base: where video#view playlists point (the media fixture, in tests)

AUTHORS = [  # did, handle, display name
    ("did:plc:ada00000000000000000000", "ada.bsky.social", "Ada Lovelace"),
    ("did:plc:grace0000000000000000000", "grace.bsky.social", "Grace Hopper 🧭"),
    ("did:plc:linus0000000000000000000", "linus.example.com", ""),
    ("did:web:margaret.example.org", "margaret.example.org", "Margaret H."),
    ("did:plc:kenji0000000000000000000", "kenji.bsky.social", "けんじ Kenji"),
    ("did:plc:noor00000000000000000000", "noor.bsky.social", "Noor"),
    ("did:plc:mateo0000000000000000000", "mateo.bsky.social", "Mateo Álvarez"),
    ("did:plc:chiara000000000000000000", "chiara.bsky.social", "Chiara Müller"),
]
WORDS = ("morning coffee release build ship feed sync cache offline network video stream update patch "
         "review merge weekend garden river city train bakery bread rain sunshine thread question idea "
         "café naïve Zürich São Paulo 東京 🚀 ✨ ☕ 🎉 👩🏽‍💻 e\u0301 — & < > \" '").split(" ")
TAGS = ["swift", "sqlite", "bluesky", "atproto", "café"]
LINKS = ["https://www.swift.org/blog/", "https://sqlite.org/wal.html", "https://docs.bsky.app/docs/api/app-bsky-feed-get-timeline",
         "https://example.com/a?x=1&y=2"]
LABELS = ["nudity", "graphic-media", "spam", "sexual"]


def iso(us):
    seconds, micro = divmod(us, 1_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + ".%03dZ" % (micro // 1000)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def encode(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def xrpc_error(name, message):
    return encode({"error": name, "message": message})


def rkey(n):
    """A TID-like record key: 13 characters of base32-sortable."""
    alphabet = "234567abcdefghijklmnopqrstuvwxyz"
    out = ""
    for _ in range(11):
        n, r = divmod(n, 32)
        out = alphabet[r] + out
    return "3k" + out


class Store:
    """Posts and timeline entries. An entry is a post, or a repost of one; both sort by `sort_us`."""

    def __init__(self, n, seed):
        self.lock = threading.RLock()
        self.rng = random.Random(seed)
        self.posts = {}            # uri -> dict(view fields), plus "_bytes" cache
        self.post_uris = []        # oldest first, for picking quoted, replied-to and reposted posts
        self.entries = []          # newest first: (sort_us, entry_id, post_uri, reason or None)
        self.raw = {}              # entry_id -> raw item bytes, for hostile items
        self.counter = 0
        self.latest_us = T0 * 1_000_000
        self.handles = {did: handle for did, handle, _ in AUTHORS}
        self.handles[OWNER_DID] = "me.test"
        self.likes = set()
        self.follows = [did for did, _, _ in AUTHORS]     # whom the owner follows, oldest first
        self.list_members = [AUTHORS[0][0], AUTHORS[1][0], AUTHORS[3][0]]
        self.append_posts(n)

    # Generation

    def profile(self, did):
        name = next((n for d, _, n in AUTHORS if d == did), "Me" if did == OWNER_DID else "")
        out = {"did": did, "handle": self.handles[did], "labels": [], "createdAt": "2023-04-01T00:00:00.000Z"}
        if name:
            out["displayName"] = name
        if did != AUTHORS[2][0]:
            out["avatar"] = f"{CDN}/img/avatar/plain/{did}/bafkavatar@jpeg"
        return out

    def _text(self, r):
        words = [r.choice(WORDS) for _ in range(r.randint(4, 18))]
        text, facets = " ".join(words), []

        def add(piece, feature):
            nonlocal text
            text += " "
            start = len(text.encode())
            text += piece
            facets.append({"index": {"byteStart": start, "byteEnd": len(text.encode())}, "features": [feature]})
        if r.random() < 0.4:
            url = r.choice(LINKS)
            add(url.split("//", 1)[1][:24], {"$type": "app.bsky.richtext.facet#link", "uri": url})
        if r.random() < 0.3:
            did, handle, _ = r.choice(AUTHORS)
            add("@" + handle, {"$type": "app.bsky.richtext.facet#mention", "did": did})
        if r.random() < 0.3:
            tag = r.choice(TAGS)
            add("#" + tag, {"$type": "app.bsky.richtext.facet#tag", "tag": tag})
        if r.random() < 0.1:
            text += "\nsecond line"
        return text, facets

    def _embed(self, r, did, key):
        roll = r.random()
        if roll < 0.15:
            return {"$type": "app.bsky.embed.images#view", "images": [
                {"thumb": f"{CDN}/img/feed_thumbnail/plain/{did}/bafkimg{key}{k}@jpeg",
                 "fullsize": f"{CDN}/img/feed_fullsize/plain/{did}/bafkimg{key}{k}@jpeg",
                 "alt": r.choice(["", "a cat", "chart of latency 📈"]), "aspectRatio": {"width": r.randint(1, 4000), "height": r.randint(1, 4000)}}
                for k in range(r.randint(1, 4))]}
        if roll < 0.22:
            cid = f"bafkvideo{key}"
            return {"$type": "app.bsky.embed.video#view", "cid": cid,
                    "playlist": f"{VIDEO_BASE}/watch/{did}/{cid}/playlist.m3u8",
                    "thumbnail": f"{VIDEO_BASE}/watch/{did}/{cid}/thumbnail.jpg",
                    "alt": r.choice(["", "waves"]), "aspectRatio": {"width": 16, "height": 9}}
        if roll < 0.32:
            url = r.choice(LINKS)
            return {"$type": "app.bsky.embed.external#view", "external": {
                "uri": url, "title": "A page", "description": "What it says", "thumb": f"{CDN}/img/thumb/{key}@jpeg"}}
        if roll < 0.40 and self.posts:
            quoted = self.posts[r.choice(self.post_uris[-200:])]
            record = {"$type": "app.bsky.embed.record#viewRecord", "uri": quoted["uri"], "cid": quoted["cid"],
                      "author": self.profile(quoted["_did"]), "value": quoted["record"], "indexedAt": quoted["indexedAt"]}
            if roll < 0.36:
                return {"$type": "app.bsky.embed.record#view", "record": record}
            return {"$type": "app.bsky.embed.recordWithMedia#view",
                    "record": {"$type": "app.bsky.embed.record#view", "record": record},
                    "media": {"$type": "app.bsky.embed.images#view", "images": [
                        {"thumb": f"{CDN}/t/{key}.jpg", "fullsize": f"{CDN}/f/{key}.jpg", "alt": "screenshot"}]}}
        return None

    def _new_post(self, sort_us, r, did=None):
        self.counter += 1
        did = did or r.choice(AUTHORS)[0]
        key = rkey(self.counter)
        uri = f"at://{did}/app.bsky.feed.post/{key}"
        text, facets = self._text(r)
        record = {"$type": "app.bsky.feed.post", "text": text, "createdAt": iso(sort_us)}
        if facets:
            record["facets"] = facets
        if r.random() < 0.8:
            record["langs"] = [r.choice(["en", "en", "de", "ja", "pt-BR"])]
        if r.random() < 0.2 and self.posts:
            parent = self.posts[r.choice(self.post_uris[-50:])]
            record["reply"] = {"root": {"uri": parent["uri"], "cid": parent["cid"]}, "parent": {"uri": parent["uri"], "cid": parent["cid"]}}
        if r.random() < 0.03:
            record["labels"] = {"$type": "com.atproto.label.defs#selfLabels", "values": [{"val": "graphic-media"}]}
        view = {"uri": uri, "cid": "bafyrei" + key, "_did": did, "record": record,
                "replyCount": r.randint(0, 20), "repostCount": r.randint(0, 50), "likeCount": r.randint(0, 500),
                "quoteCount": r.randint(0, 5), "indexedAt": iso(sort_us + 500_000),
                "labels": [{"src": "did:plc:labeler", "uri": uri, "val": r.choice(LABELS), "cts": iso(sort_us)}] if r.random() < 0.05 else []}
        embed = self._embed(r, did, key)
        if embed:
            view["embed"] = embed
        self.posts[uri] = view
        self.post_uris.append(uri)
        if self.counter % 5 == 0:
            self.likes.add(uri)
        return uri

    def _next_time(self):
        self.latest_us += STEP_US
        return self.latest_us

    def append_posts(self, count, reposts=True):
        """Adds `count` entries at the top; about one in ten is a repost of an older post."""
        with self.lock:
            added = []
            for _ in range(count):
                sort_us = self._next_time()
                if reposts and len(self.posts) > 20 and self.rng.random() < 0.1:
                    old = self.post_uris[self.rng.randrange(len(self.post_uris) - 10)]
                    added.append(self._repost(old, self.rng.choice(AUTHORS)[0], sort_us))
                else:
                    uri = self._new_post(sort_us, self.rng)
                    self.entries.insert(0, (sort_us, uri, uri, None))
                    added.append(uri)
            return added

    def _repost(self, uri, by, sort_us):
        self.counter += 1
        repost_uri = f"at://{by}/app.bsky.feed.repost/{rkey(self.counter)}"
        reason = {"$type": "app.bsky.feed.defs#reasonRepost", "by": by, "uri": repost_uri,
                  "cid": "bafyrepost" + rkey(self.counter), "indexedAt": iso(sort_us)}
        self.entries.insert(0, (sort_us, repost_uri, uri, reason))
        return repost_uri

    def repost(self, uri, by):
        with self.lock:
            if uri not in self.posts or by not in self.handles:
                return None
            return self._repost(uri, by, self._next_time())

    def add_bad(self, kind):
        """A hostile item at the top, which the client must skip with a reason."""
        with self.lock:
            sort_us = self._next_time()
            self.counter += 1
            did = AUTHORS[0][0]
            uri = f"at://{did}/app.bsky.feed.post/{rkey(self.counter)}"
            view = {"uri": uri, "cid": "bafybad", "author": self.profile(did),
                    "record": {"$type": "app.bsky.feed.post", "text": "bad", "createdAt": iso(sort_us)},
                    "indexedAt": iso(sort_us), "labels": []}
            if kind == "count":
                view["likeCount"] = -5
            elif kind == "ratio":
                view["embed"] = {"$type": "app.bsky.embed.images#view", "images": [
                    {"thumb": f"{CDN}/t.jpg", "fullsize": f"{CDN}/f.jpg", "alt": "", "aspectRatio": {"width": 10**30, "height": 1}}]}
            elif kind == "time":
                view["record"]["createdAt"] = "2026-02-30T00:00:00Z"
            else:
                return None
            self.raw[uri] = b'{"post":' + encode(view) + b"}"
            self.entries.insert(0, (sort_us, uri, uri, None))
            return uri

    # Views

    def post_bytes(self, uri):
        view = self.posts[uri]
        cached = view.get("_bytes")
        if cached is None:
            out = {k: v for k, v in view.items() if not k.startswith("_")}
            out["author"] = self.profile(view["_did"])
            cached = view["_bytes"] = encode(out)
        return cached

    def item_bytes(self, entry):
        _, entry_id, uri, reason = entry
        if entry_id in self.raw:
            return self.raw[entry_id]
        body = b'{"post":' + self.post_bytes(uri)
        if reason:
            body += b',"reason":' + encode(dict(reason, by=self.profile(reason["by"])))
        return body + b"}"

    def timeline(self, name, params, viewer):
        """The entries of a timeline, newest first, or an (status, error, message) for a bad request."""
        if name == "getTimeline":
            return self.entries
        if name == "getAuthorFeed":
            actor = params.get("actor", "")
            did = next((d for d, h in self.handles.items() if actor in (d, h)), None)
            if did is None:
                return 400, "InvalidRequest", "Profile not found"
            filt = params.get("filter", "posts_with_replies")
            out = []
            for e in self.entries:
                if e[2] not in self.posts:
                    continue
                post = self.posts[e[2]]
                by = e[3]["by"] if e[3] else post["_did"]
                if by != did:
                    continue
                if filt == "posts_no_replies" and "reply" in post["record"] and not e[3]:
                    continue
                if filt == "posts_with_media" and (e[3] or post.get("embed", {}).get("$type") not in
                                                   ("app.bsky.embed.images#view", "app.bsky.embed.video#view")):
                    continue
                out.append(e)
            return out
        if name == "getFeed":
            if params.get("feed") != FEED_URI:
                return 400, "UnknownFeed", "Unknown feed"
            # The custom feed: every post with a hashtag.
            return [e for e in self.entries if e[3] is None and e[2] in self.posts and "#" in self.posts[e[2]]["record"]["text"]]
        if name == "getListFeed":
            if params.get("list") != LIST_URI:
                return 400, "UnknownList", "Unknown list"
            members = set(self.list_members)
            return [e for e in self.entries if e[3] is None and e[2] in self.posts and self.posts[e[2]]["_did"] in members]
        if name == "getActorLikes":
            if params.get("actor") not in (viewer, self.handles.get(viewer)):
                return 400, "InvalidRequest", "Profile not found"
            return [e for e in self.entries if e[3] is None and e[2] in self.likes]
        if name == "searchPosts":
            q = params.get("q", "").lower()
            if not q:
                return 400, "BadQueryString", "Query is empty"
            return [e for e in self.entries if e[3] is None and e[2] in self.posts and q in self.posts[e[2]]["record"]["text"].lower()]
        return None

    def page(self, name, params, viewer):
        with self.lock:
            entries = self.timeline(name, params, viewer)
            if entries is None or isinstance(entries, tuple):
                return entries
            limit_text = params.get("limit", str(DEFAULT_LIMIT))
            if not limit_text.isdigit() or not 1 <= int(limit_text) <= MAX_LIMIT:
                return 400, "InvalidRequest", "Error: limit must be an integer between 1 and 100"
            limit = int(limit_text)
            start = 0
            cursor = params.get("cursor")
            if cursor:
                # Opaque to the client: "<sort time in µs>::<entry id>"; the next item sorts after it.
                sort_text, _, entry_id = cursor.partition("::")
                if not sort_text.isdigit():
                    return 400, "InvalidRequest", "Malformed cursor"
                key = (int(sort_text), entry_id)
                lo, hi = 0, len(entries)          # newest first: find the first entry that sorts below the cursor
                while lo < hi:
                    mid = (lo + hi) // 2
                    if (entries[mid][0], entries[mid][1]) < key:
                        hi = mid
                    else:
                        lo = mid + 1
                start = lo
            chosen = entries[start:start + limit]
            bare = name == "searchPosts"
            items = [self.post_bytes(e[2]) if bare else self.item_bytes(e) for e in chosen]
            body = b'{"' + (b"posts" if bare else b"feed") + b'":[' + b",".join(items) + b"]"
            if start + limit < len(entries) and chosen:
                body += b',"cursor":' + encode(f"{chosen[-1][0]}::{chosen[-1][1]}")
            if bare:
                body += b',"hitsTotal":' + str(len(entries)).encode()
            return body + b"}"

    def get_posts(self, uris):
        """app.bsky.feed.getPosts: the views of up to 25 URIs; unknown ones are left out."""
        if not 1 <= len(uris) <= 25:
            return 400, "InvalidRequest", "Error: uris must have between 1 and 25 items"
        with self.lock:
            return b'{"posts":[' + b",".join(self.post_bytes(u) for u in uris if u in self.posts) + b"]}"

    def graph_page(self, name, params):
        """app.bsky.graph.getFollows (the owner's follows) and getList (the list's members), paged."""
        with self.lock:
            if name == "getFollows":
                if params.get("actor") not in (OWNER_DID, self.handles[OWNER_DID]):
                    return 400, "InvalidRequest", "Profile not found"
                dids, key = list(self.follows), "follows"
                head = b'"subject":' + encode(self.profile(OWNER_DID))
            else:
                if params.get("list") != LIST_URI:
                    return 400, "InvalidRequest", "List not found"
                dids, key = list(self.list_members), "items"
                head = b'"list":' + encode({"uri": LIST_URI, "cid": "bafylist", "name": "Friends", "purpose": "app.bsky.graph.defs#curatelist",
                                             "creator": self.profile(OWNER_DID), "indexedAt": iso(T0 * 1_000_000)})
            limit_text = params.get("limit", str(DEFAULT_LIMIT))
            if not limit_text.isdigit() or not 1 <= int(limit_text) <= MAX_LIMIT:
                return 400, "InvalidRequest", "Error: limit must be an integer between 1 and 100"
            cursor = params.get("cursor") or "0"
            if not cursor.isdigit():
                return 400, "InvalidRequest", "Malformed cursor"
            start, limit = int(cursor), int(limit_text)
            chosen = dids[start:start + limit]
            if name == "getFollows":
                items = [encode(self.profile(d)) for d in chosen]
            else:
                items = [encode({"uri": f"at://{OWNER_DID}/app.bsky.graph.listitem/{rkey(start + i)}", "subject": self.profile(d)})
                         for i, d in enumerate(chosen)]
            body = b"{" + head + b',"' + key.encode() + b'":[' + b",".join(items) + b"]"
            if start + limit < len(dids):
                body += b',"cursor":' + encode(str(start + limit))
            return body + b"}"

    def entry_ids(self, name, params, viewer):
        with self.lock:
            entries = self.timeline(name, params, viewer)
            return None if entries is None or isinstance(entries, tuple) else [e[1] for e in entries]

    def delete(self, uri):
        with self.lock:
            if uri not in self.posts:
                return False
            del self.posts[uri]
            self.post_uris.remove(uri)
            self.entries = [e for e in self.entries if e[2] != uri]
            self.likes.discard(uri)
            return True

    def set_counts(self, uri, likes):
        with self.lock:
            if uri not in self.posts:
                return False
            self.posts[uri]["likeCount"] = likes
            self.posts[uri].pop("_bytes", None)
            return True

    def set_handle(self, did, handle):
        with self.lock:
            if did not in self.handles:
                return False
            self.handles[did] = handle
            for view in self.posts.values():
                view.pop("_bytes", None)
            return True


class Sessions:
    """Issued JWTs. Refresh tokens rotate: each refresh revokes the one it used."""

    def __init__(self, identifier, password, access_ttl, refresh_ttl):
        self.lock = threading.Lock()
        self.identifier, self.password = identifier, password
        self.access_ttl, self.refresh_ttl = access_ttl, refresh_ttl
        self.access, self.refresh = {}, {}     # token -> expiry (Unix seconds)
        self.logins = self.refreshes = 0
        # Appended to every token issued from now on (/_control/token-suffix): a hostile PDS.
        self.access_suffix = self.refresh_suffix = ""

    def _jwt(self, scope, ttl):
        now = time.time()
        payload = {"scope": scope, "sub": OWNER_DID, "aud": "did:web:bsky.example", "iat": int(now),
                   "exp": int(now + ttl), "jti": b64url(os.urandom(12))}
        return b64url(b'{"typ":"JWT","alg":"ES256K"}') + "." + b64url(encode(payload)) + "." + b64url(os.urandom(32)), now + ttl

    def issue(self):
        access, access_exp = self._jwt("com.atproto.access", self.access_ttl)
        refresh, refresh_exp = self._jwt("com.atproto.refresh", self.refresh_ttl)
        access, refresh = access + self.access_suffix, refresh + self.refresh_suffix
        self.access[access], self.refresh[refresh] = access_exp, refresh_exp
        return {"accessJwt": access, "refreshJwt": refresh, "handle": "me.test", "did": OWNER_DID, "active": True}

    def login(self, body):
        with self.lock:
            self.logins += 1
            if not isinstance(body, dict) or body.get("identifier") not in (self.identifier, OWNER_DID) \
                    or body.get("password") != self.password:
                return 401, xrpc_error("AuthenticationRequired", "Invalid identifier or password")
            return 200, encode(self.issue())

    def renew(self, token):
        with self.lock:
            self.refreshes += 1
            expiry = self.refresh.get(token)
            if expiry is None:
                return 400, xrpc_error("InvalidToken", "Token has been revoked")
            if expiry <= time.time():
                return 400, xrpc_error("ExpiredToken", "Token has expired")
            del self.refresh[token]
            return 200, encode(self.issue())

    def check(self, token):
        """None when the access token is good, else (status, body)."""
        with self.lock:
            expiry = self.access.get(token)
        if token is None:
            return 401, xrpc_error("AuthenticationRequired", "Authentication Required")
        if expiry is None:
            return 400, xrpc_error("InvalidToken", "Token could not be verified")
        if expiry <= time.time():
            return 400, xrpc_error("ExpiredToken", "Token has expired")
        return None

    def expire_all(self, refresh_too):
        with self.lock:
            for token in self.access:
                self.access[token] = 0
            if refresh_too:
                for token in self.refresh:
                    self.refresh[token] = 0


class RateLimit:
    """A fixed window from its first request, reported as the PDS does: RateLimit-Reset in Unix seconds."""

    def __init__(self, limit, window):
        self.lock = threading.Lock()
        self.set(limit, window)

    def set(self, limit, window):
        with self.lock:
            self.limit, self.window, self.start, self.used = limit, window, None, 0

    def hit(self):
        now = time.time()
        with self.lock:
            if self.start is None or now >= self.start + self.window:
                self.start, self.used = now, 0
            self.used += 1
            allowed = self.used <= self.limit
            reset = self.start + self.window
            headers = [("RateLimit-Limit", str(self.limit)), ("RateLimit-Remaining", str(max(self.limit - self.used, 0))),
                       ("RateLimit-Reset", str(int(reset) + (reset > int(reset)))),
                       ("RateLimit-Policy", f"{self.limit};w={self.window:g}")]
        return allowed, headers


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "feedsync-bluesky-fixture/1"

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
        params = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        if url.path.startswith("/xrpc/"):
            self._xrpc(url.path[6:], params, body)
        elif url.path.startswith("/_control/"):
            self._control(url.path, params, body)
        else:
            self._send(404, [], xrpc_error("NotFound", "Not Found"))

    do_POST = do_GET

    def _read_body(self):
        length = self.headers.get("Content-Length") or "0"
        if self.headers.get("Transfer-Encoding") or not length.isdigit() or int(length) > MAX_BODY:
            self.close_connection = True
            self._send(400, [], xrpc_error("InvalidRequest", "Need a Content-Length of at most 1 MiB"))
            return None
        return self.rfile.read(int(length)) if length != "0" else b""

    def _send(self, status, headers, body):
        lines = [f"HTTP/1.1 {status} {responses.get(status, 'Error')}",
                 "Content-Type: application/json; charset=utf-8", f"Content-Length: {len(body)}"]
        lines += [f"{name}: {value}" for name, value in headers]
        if self.close_connection:
            lines.append("Connection: close")
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)

    def _bearer(self):
        header = self.headers.get("Authorization") or ""
        scheme, _, token = header.strip().partition(" ")
        return token.strip() if scheme.lower() == "bearer" and token.strip() else None

    def _xrpc(self, method, params, body):
        app = self.server.app
        key = f"{self.command} {method}"
        if app.echo.respond(self, "/xrpc/" + method, body):
            app.count(key, "echo")
            return
        if self.headers.get("X-Injected") is not None:
            with app.stats_lock:
                app.injected += 1
        if method == "com.atproto.server.createSession":
            allowed, headers = app.login_rate.hit()
        else:
            allowed, headers = app.rate.hit()
        if not allowed:
            status, out = 429, xrpc_error("RateLimitExceeded", "Rate Limit Exceeded")
        elif method == "com.atproto.server.createSession" and self.command == "POST":
            try:
                status, out = app.sessions.login(json.loads(body or b"null"))
            except ValueError:
                status, out = 400, xrpc_error("InvalidRequest", "Body is not JSON")
        elif method == "com.atproto.server.refreshSession" and self.command == "POST":
            status, out = app.sessions.renew(self._bearer())
        elif self.command == "GET" and method.startswith("app.bsky.feed.") and method[14:] in (
                "getTimeline", "getAuthorFeed", "getFeed", "getListFeed", "getActorLikes", "searchPosts"):
            failure = app.sessions.check(self._bearer())
            if failure:
                status, out = failure
            else:
                result = app.store.page(method[14:], params, OWNER_DID)
                if isinstance(result, tuple):
                    status, out = result[0], xrpc_error(result[1], result[2])
                else:
                    status, out = 200, result
        elif self.command == "GET" and method == "app.bsky.actor.getProfile":
            failure = app.sessions.check(self._bearer())
            actor = params.get("actor", "")
            did = next((d for d, h in app.store.handles.items() if actor in (d, h)), None)
            status, out = failure or ((200, encode(app.store.profile(did))) if did else (400, xrpc_error("InvalidRequest", "Profile not found")))
        elif self.command == "GET" and method in ("app.bsky.feed.getPosts", "app.bsky.graph.getFollows", "app.bsky.graph.getList"):
            failure = app.sessions.check(self._bearer())
            if failure:
                status, out = failure
            else:
                if method == "app.bsky.feed.getPosts":
                    result = app.store.get_posts(parse_qs(urlsplit(self.path).query).get("uris", []))
                else:
                    result = app.store.graph_page(method[15:], params)
                status, out = (result[0], xrpc_error(result[1], result[2])) if isinstance(result, tuple) else (200, result)
        else:
            status, out = 501, xrpc_error("MethodNotImplemented", "Method Not Implemented")
        app.count(key, status)
        self._send(status, headers, out)

    def _control(self, path, params, body):
        app, store = self.server.app, self.server.app.store
        if not ipaddress.ip_address(self.client_address[0]).is_loopback:
            return self._send(403, [], xrpc_error("Forbidden", "Control endpoints are loopback-only"))
        route = (self.command, path)
        if route == ("POST", "/_control/post"):
            count = params.get("count", "1")
            if not count.isdigit() or int(count) > 100_000:
                return self._send(400, [], xrpc_error("InvalidRequest", "count must be 0...100000"))
            result = {"ids": store.append_posts(int(count), reposts=params.get("reposts") != "0")}
        elif route == ("POST", "/_control/repost"):
            entry = store.repost(params.get("uri", ""), params.get("by", AUTHORS[0][0]))
            if entry is None:
                return self._send(404, [], xrpc_error("NotFound", "No such post or reposter"))
            result = {"id": entry}
        elif route == ("POST", "/_control/bad"):
            entry = store.add_bad(params.get("kind", ""))
            if entry is None:
                return self._send(400, [], xrpc_error("InvalidRequest", "kind is count, ratio or time"))
            result = {"id": entry}
        elif route == ("POST", "/_control/delete"):
            result = {"deleted": store.delete(params.get("uri", ""))}
        elif route == ("POST", "/_control/likes"):
            result = {"changed": store.set_counts(params.get("uri", ""), int(params.get("count", "0")))}
        elif route == ("POST", "/_control/handle"):
            result = {"changed": store.set_handle(params.get("did", ""), params.get("handle", ""))}
        elif route == ("POST", "/_control/token-suffix"):
            settings = json.loads(body or b"{}")
            with app.sessions.lock:
                app.sessions.access_suffix = str(settings.get("access", ""))
                app.sessions.refresh_suffix = str(settings.get("refresh", ""))
            result = {"access": app.sessions.access_suffix, "refresh": app.sessions.refresh_suffix}
        elif path == "/_control/echo":
            try:
                result = app.echo.control(self.command, body)
            except (ValueError, UnicodeDecodeError) as e:
                return self._send(400, [], xrpc_error("InvalidRequest", str(e)))
        elif route == ("POST", "/_control/expire-tokens"):
            app.sessions.expire_all(refresh_too=params.get("refresh") == "1")
            result = {"expired": True}
        elif route == ("POST", "/_control/rate-limit"):
            settings = json.loads(body or b"{}")
            app.rate.set(int(settings.get("limit", app.rate.limit)), float(settings.get("window", app.rate.window)))
            result = {"limit": app.rate.limit, "window": app.rate.window}
        elif route == ("GET", "/_control/timeline"):
            name = params.pop("name", "getTimeline")
            ids = store.entry_ids(name, params, OWNER_DID)
            if ids is None:
                return self._send(404, [], xrpc_error("NotFound", "No such timeline"))
            result = {"ids": ids}
        elif route == ("GET", "/_control/post"):
            with store.lock:
                if params.get("uri") not in store.posts:
                    return self._send(404, [], xrpc_error("NotFound", "No such post"))
                return self._send(200, [], store.post_bytes(params["uri"]))
        elif route == ("GET", "/_control/stats"):
            with app.stats_lock:
                requests = {k: dict(v) for k, v in app.stats.items()}
                injected = app.injected
            result = {"total_requests": sum(sum(v.values()) for v in requests.values()), "requests": requests,
                      "logins": app.sessions.logins, "refreshes": app.sessions.refreshes, "injected_headers": injected}
        elif route == ("POST", "/_control/reset-stats"):
            with app.stats_lock:
                app.stats = {}
            app.sessions.logins = app.sessions.refreshes = 0
            result = {"reset": True}
        else:
            return self._send(404, [], xrpc_error("NotFound", f"No such control endpoint: {self.command} {path}"))
        self._send(200, [], encode(result))


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


class App:
    def __init__(self, args):
        self.store = Store(args.posts, args.seed)
        self.sessions = Sessions(args.identifier, args.password, args.access_ttl, args.refresh_ttl)
        self.echo = CredentialEcho(lambda message: {"error": message, "message": message})
        self.rate = RateLimit(args.rate_limit, args.rate_window)
        self.login_rate = RateLimit(args.login_limit, 300)
        self.stats, self.stats_lock = {}, threading.Lock()
        self.injected = 0       # requests that arrived with an X-Injected header

    def count(self, key, status):
        with self.stats_lock:
            per_status = self.stats.setdefault(key, {})
            per_status[str(status)] = per_status.get(str(status), 0) + 1


def main():
    global VIDEO_BASE
    p = argparse.ArgumentParser(description="Fake Bluesky service for feedsync tests.")
    p.add_argument("--port", type=int, default=8091, help="TCP port on 127.0.0.1; 0 picks a free one")
    p.add_argument("--posts", type=int, default=200, help="timeline entries at start (about one in ten a repost)")
    p.add_argument("--seed", type=int, default=1, help="seed for all generated data")
    p.add_argument("--identifier", default="me.test", help="the handle that logs in")
    p.add_argument("--password", default="app-pass-word", help="the app password")
    p.add_argument("--access-ttl", type=float, default=7200, help="access token lifetime in seconds (bsky.social: about 2 hours)")
    p.add_argument("--refresh-ttl", type=float, default=90 * 86400, help="refresh token lifetime in seconds")
    p.add_argument("--rate-limit", type=int, default=3000, help="requests per window over all methods (bsky.social: 3000)")
    p.add_argument("--rate-window", type=float, default=300, help="window length in seconds")
    p.add_argument("--login-limit", type=int, default=30, help="createSession calls per 5 minutes")
    p.add_argument("--video-base", default=VIDEO_BASE,
                   help="where app.bsky.embed.video#view playlists point (the media fixture's address, in tests)")
    p.add_argument("--exit-on-stdin-eof", action="store_true",
                   help="exit when standard input closes (tests pass a pipe, so the server dies with its test)")
    args = p.parse_args()
    VIDEO_BASE = args.video_base.rstrip("/")
    if args.posts < 0 or args.rate_limit < 0 or args.rate_window <= 0:
        p.error("need --posts >= 0, --rate-limit >= 0 and --rate-window > 0")

    def stop(signum, frame):
        os._exit(0)

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
        server = Server(("127.0.0.1", args.port), Handler)
        server.app = app
        try:
            print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
            server.serve_forever()
        finally:
            server.server_close()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
