#!/usr/bin/env python3
"""Fake Mastodon server for feedsync's Mastodon client (tests, demos, benchmarks).

Standard library only. It serves the read side of the Mastodon REST API (home, list and hashtag
timelines, an account's statuses, bookmarks, favourites, verify_credentials, lookup) with the
entity shapes, pagination (max_id / since_id / min_id / limit and the Link header) and the
X-RateLimit-* headers documented on docs.joinmastodon.org. See README.md beside this file.
"""
import argparse
import bisect
import calendar
import ipaddress
import json
import os
import random
import re
import signal
import socket
import sys
import threading
import time
from http.client import responses
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, parse_qsl, quote, unquote, urlencode, urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from credential_echo import CredentialEcho  # noqa: E402
from oauth import OAuth  # noqa: E402

DOMAIN = "mastodon.example"                     # the instance the token belongs to
BASE = f"https://{DOMAIN}"
T0_MS = calendar.timegm((2026, 1, 1, 0, 0, 0)) * 1000
STEP_MS = 137_000                                # status i is created in [T0 + i*STEP, T0 + (i+1)*STEP)
DEFAULT_LIMIT, MAX_LIMIT = 20, 40
MAX_BODY = 1 << 20
CURSOR_PARAMS = ("max_id", "since_id", "min_id")

# username, domain (None = local), display name, bot, locked
ACCOUNTS = [
    ("ada", None, "Ada Lovelace", False, False),
    ("grace", None, "Grace Hopper 🧭", False, False),
    ("linus", None, "Linus", False, False),
    ("margaret", None, "Margaret H. :verified:", False, False),
    ("ken", None, "Ken T.", False, False),
    ("bob", "example.social", "Bob “the builder”", False, False),
    ("chiara", "fosstodon.org", "Chiara Müller", False, False),
    ("kenji", "mstdn.jp", "けんじ Kenji", False, False),
    ("noor", "hachyderm.io", "Noor", False, False),
    ("mateo", "mastodon.online", "Mateo Álvarez", False, True),
    ("release_bot", "botsin.space", "Release Bot 🤖", True, False),
    ("ingrid", "social.example.org", "Ingrid Sørensen", False, False),
]
OWNER = 0                                        # the token belongs to @ada

# Display form in content -> Tag.name (always lowercase, as Mastodon serves it)
HASHTAGS = ["Swift", "swift", "SwiftUI", "SQLite", "iOS", "Fediverse", "OpenSource", "Photography",
            "Zürich", "buildinpublic", "mastodev", "café"]
KNOWN_TAGS = {t.lower() for t in HASHTAGS}
WORDS = (
    "morning coffee release build ship feed sync cache offline network latency video stream update "
    "patch review merge branch deploy weekend garden river mountain city train station bakery bread "
    "sourdough rain sunshine thread question answer idea draft notes meeting lunch walk photo camera "
    "sunset harbor ferry market music concert vinyl book chapter library quiet tiny huge new old fast "
    "slow finally again today tomorrow honestly really maybe definitely never always just still the a "
    "of to and with for from about into over after before while because but so café naïve Zürich "
    "São Paulo 東京 🚀 ✨ ☕ 🎉 —"
).split()
SNIPPETS = [  # already HTML-escaped, the way Mastodon's formatter escapes plain text
    "Tom &amp; Jerry", "x &lt; y &amp;&amp; y &gt; z", "it&#39;s fine", "&quot;quoted&quot;",
    "don&#39;t @ me", "5 &lt; 7", "R&amp;D", "a -&gt; b", "&lt;br&gt; is a tag",
]
LINKS = [
    "https://www.swift.org/blog/swift-6-released/",
    "https://sqlite.org/wal.html",
    "https://docs.joinmastodon.org/api/guidelines/#pagination",
    "https://example.com/page/that/is/very/long/and/keeps/going?utm_source=mastodon&x=1",
    "https://github.com/apple/swift-nio",
    "https://en.wikipedia.org/wiki/Z%C3%BCrich",
]
SPOILERS = ["Spoilers for the finale", "food (meat)", "politics", "eye contact", "long post 🧵",
            "mental health, mh-", "Swift 6 migration rant"]
APPS = [{"name": "Web", "website": None}, {"name": "Ivory for iOS", "website": "https://tapbots.com/ivory"},
        {"name": "Tusky", "website": "https://tusky.app"}, {"name": "feedsync", "website": None}]
LANGUAGES = ["en"] * 14 + ["de", "fr", "ja", "es", None]
EMOJI = {"shortcode": "blobcat",
         "url": f"{BASE}/system/custom_emojis/images/000/012/345/original/6f1c2d4e9b0a7c3d.png",
         "static_url": f"{BASE}/system/custom_emojis/images/000/012/345/static/6f1c2d4e9b0a7c3d.png",
         "visible_in_picker": True}
VERIFIED_EMOJI = {"shortcode": "verified",
                  "url": f"{BASE}/system/custom_emojis/images/000/000/042/original/2b5c9a0f1e3d4c7b.png",
                  "static_url": f"{BASE}/system/custom_emojis/images/000/000/042/static/2b5c9a0f1e3d4c7b.png",
                  "visible_in_picker": True}

_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def encode(obj):
    """JSON bytes escaped the way Rails' encoder does (<, >, & and U+2028/9 as \\uXXXX)."""
    text = _json(obj)
    text = (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return text.encode()


def error_body(message):
    return _json({"error": message}).encode()


def iso_ms(ms):
    """Mastodon's Datetime: 2019-12-08T03:48:33.901Z."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def iso_frac(seconds, digits):
    """UTC ISO 8601 with `digits` fraction digits, e.g. 2026-11-21T13:30:00.000Z for 3."""
    whole, frac = divmod(round(seconds * 10 ** digits), 10 ** digits)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
    return stamp + (f".{frac:0{digits}d}" if digits else "") + "Z"


def snowflake(ms, low):
    return (ms << 16) | (low & 0xFFFF)


class Store:
    """All statuses, the timelines over them and the bookmark/favourite records.

    Timeline status i (1-based) depends only on (seed, i), so --statuses 100 followed by
    post?count=50 gives the same data as --statuses 150. A reblog wrapper's original is a
    separate, older status; it is not in home or list timelines (it is in its author's account
    timeline and in hashtag timelines, as on a real server).
    """

    def __init__(self, n, seed):
        self.lock = threading.Lock()
        self.seed = seed
        rng = random.Random(f"mastodon:{seed}:accounts")
        self.accounts = [self._make_account(k, rng) for k in range(len(ACCOUNTS))]
        self.account_by_id = {a["id"]: k for k, a in enumerate(self.accounts)}
        self.account_bytes = [encode(a) for a in self.accounts]
        self.statuses = {}        # int id -> record dict (see _make_status)
        self.cache = {}           # int id -> encoded JSON bytes
        self.pages = {}           # (timeline, limit, max_id, since_id, min_id) -> page(); emptied by every change
        self.wrappers = {}        # original int id -> wrapper int id
        self.home, self.list1 = [], []
        self.by_account = [[] for _ in self.accounts]
        self.by_tag = {}
        self.count = 0            # timeline statuses generated so far (i of the last one)
        self.bookmarks = Records(rng.randint(23_000, 24_000), 1, 7)
        self.favourites = Records(rng.randint(23_700_000, 23_800_000), 1, 40)
        self.append(n)
        # Seed some bookmarks and favourites in an order unrelated to status order.
        pool = [sid for sid in self.home if not self.statuses[sid]["wrapper"]]
        pick = random.Random(f"mastodon:{seed}:records")
        for records, share in ((self.bookmarks, 0.08), (self.favourites, 0.12)):
            chosen = pick.sample(pool, int(len(pool) * share))
            for sid in chosen:
                records.add(sid, pick)

    # ---- generation -------------------------------------------------------------------------

    def _make_account(self, k, rng):
        username, domain, display, bot, locked = ACCOUNTS[k]
        created = calendar.timegm((2016 + rng.randint(0, 8), rng.randint(1, 12), rng.randint(1, 28), 0, 0, 0)) * 1000
        host = domain or DOMAIN
        acct = username if domain is None else f"{username}@{domain}"
        avatar = (f"{BASE}/system/{'' if domain is None else 'cache/'}accounts/avatars/"
                  f"{k + 1:03d}/{rng.getrandbits(24):06x}/original/{rng.getrandbits(64):016x}")
        animated = k == 7
        notes = [
            "<p>Mostly Swift, SQLite and bread. Opinions are my cat&#39;s.</p>",
            "<p>I post about <a href=\"" + BASE + "/tags/swift\" class=\"mention hashtag\" rel=\"tag\">#<span>swift</span></a>"
            " &amp; compilers.<br>Building things in public.</p>",
            "",
            "<p>Photos, trains, &lt;code&gt; and the occasional rant.</p>",
        ]
        return {
            "id": str(snowflake(created, 1000 + k)),
            "username": username,
            "acct": acct,
            "display_name": display,
            "locked": locked,
            "bot": bot,
            "discoverable": k % 4 != 3,
            "group": False,
            "created_at": iso_ms(created),
            "note": notes[k % len(notes)],
            "url": f"https://{host}/@{username}",
            "uri": f"https://{host}/users/{username}",
            "avatar": avatar + (".gif" if animated else ".png"),
            "avatar_static": avatar + ".png",
            "header": f"https://{DOMAIN}/headers/original/missing.png",
            "header_static": f"https://{DOMAIN}/headers/original/missing.png",
            "followers_count": int(rng.random() ** 3 * 20000),
            "following_count": rng.randint(0, 900),
            "statuses_count": rng.randint(10, 60000),
            "last_status_at": "2026-01-01",
            "emojis": [VERIFIED_EMOJI] if ":verified:" in display else [],
            "fields": [],
        }

    def _header(self, i):
        """Cheap facts about timeline status i that other statuses refer to (replies)."""
        h = random.Random(f"mastodon:{self.seed}:h:{i}")
        created = T0_MS + i * STEP_MS + h.randrange(STEP_MS)
        sid = snowflake(created, (i * 40503) & 0x7FFF)
        author = min(int(h.random() ** 1.6 * len(self.accounts)), len(self.accounts) - 1)
        reblog = h.random() < 0.10
        return created, sid, author, reblog

    def _status_url(self, k, sid):
        username, domain = ACCOUNTS[k][0], ACCOUNTS[k][1]
        if domain is None:
            return f"{BASE}/users/{username}/statuses/{sid}", f"{BASE}/@{username}/{sid}"
        # Remote statuses keep the remote server's own ids in their URIs.
        remote = sid // 7 + 99_000_000_000_000
        return f"https://{domain}/users/{username}/statuses/{remote}", f"https://{domain}/@{username}/{remote}"

    def _mention(self, k):
        a = self.accounts[k]
        return {"id": a["id"], "username": a["username"], "url": a["url"], "acct": a["acct"]}

    def _mention_html(self, k):
        a = self.accounts[k]
        return (f'<span class="h-card" translate="no"><a href="{a["url"]}" class="u-url mention">'
                f'@<span>{a["username"]}</span></a></span>')

    @staticmethod
    def _link_html(url):
        scheme, rest = url.split("://", 1)
        prefix = scheme + "://"
        if rest.startswith("www."):
            prefix, rest = prefix + "www.", rest[4:]
        shown, hidden = rest[:30], rest[30:]
        cls = "ellipsis" if hidden else ""
        href = url.replace("&", "&amp;")
        return (f'<a href="{href}" target="_blank" rel="nofollow noopener noreferrer" translate="no">'
                f'<span class="invisible">{prefix}</span><span class="{cls}">{shown.replace("&", "&amp;")}</span>'
                f'<span class="invisible">{hidden.replace("&", "&amp;")}</span></a>')

    @staticmethod
    def _tag_html(display, author_domain):
        name = display.lower()
        if author_domain is None:
            return f'<a href="{BASE}/tags/{quote(name)}" class="mention hashtag" rel="tag">#<span>{display}</span></a>'
        return (f'<a href="https://{author_domain}/tags/{quote(name)}" class="mention hashtag" '
                f'rel="nofollow noopener noreferrer" target="_blank">#<span>{display}</span></a>')

    def _media(self, r, created, sensitive_hint):
        kind = r.choices(["image", "video", "gifv", "audio"], [60, 15, 15, 10])[0]
        count = r.randint(1, 4) if kind == "image" else 1
        out = []
        for n in range(count):
            mid = snowflake(created - 30_000 - n * 1000, r.getrandbits(16))
            path = f"{str(mid)[:3]}/{str(mid)[3:6]}/{str(mid)[6:9]}"
            token = f"{r.getrandbits(64):016x}"
            files = f"{BASE}/system/media_attachments/files/{path}"
            blur = "".join(r.choice("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")
                           for _ in range(28))
            alt = r.choice([None, "A sourdough loaf on a wooden board", "Screenshot of Xcode showing a build error",
                            "Harbour at sunset, ferries in the distance", "Cat asleep on a keyboard &amp; mouse"])
            if kind == "image":
                w, h = r.choice([(1280, 960), (1920, 1080), (1080, 1350), (640, 480), (2048, 1536)])
                sw, sh = (640, round(640 * h / w)) if w >= h else (round(640 * w / h), 640)
                meta = {"original": {"width": w, "height": h, "size": f"{w}x{h}", "aspect": w / h},
                        "small": {"width": sw, "height": sh, "size": f"{sw}x{sh}", "aspect": sw / sh},
                        "focus": {"x": round(r.uniform(-1, 1), 2), "y": round(r.uniform(-1, 1), 2)}}
                url, preview = f"{files}/original/{token}.jpeg", f"{files}/small/{token}.jpeg"
            elif kind in ("video", "gifv"):
                w, h = r.choice([(1280, 720), (1920, 1080), (720, 1280), (600, 332)])
                duration = round(r.uniform(1.5, 8.0) if kind == "gifv" else r.uniform(5, 600), 3)
                fps, rate = ((30, "30000/1001") if kind == "video" else (25, "25/1"))
                bitrate = r.randint(400_000, 4_000_000)
                mins, secs = divmod(duration, 60)
                meta = {"length": f"0:{int(mins):02d}:{secs:05.2f}", "duration": duration, "fps": fps,
                        "size": f"{w}x{h}", "width": w, "height": h, "aspect": w / h,
                        "original": {"width": w, "height": h, "frame_rate": rate, "duration": duration,
                                     "bitrate": bitrate},
                        "small": {"width": 400, "height": round(400 * h / w), "size": f"400x{round(400 * h / w)}",
                                  "aspect": 400 / round(400 * h / w)}}
                if kind == "video":
                    meta.update({"audio_encode": "aac (LC) (mp4a / 0x6134706D)", "audio_bitrate": "44100 Hz",
                                 "audio_channels": "stereo"})
                url, preview = f"{files}/original/{token}.mp4", f"{files}/small/{token}.png"
            else:
                duration = round(r.uniform(20, 900), 6)
                mins, secs = divmod(duration, 60)
                meta = {"length": f"0:{int(mins):02d}:{secs:05.2f}", "duration": round(duration, 2),
                        "audio_encode": "mp3", "audio_bitrate": "44100 Hz", "audio_channels": "stereo",
                        "original": {"duration": duration, "bitrate": r.randint(96_000, 320_000)}}
                url, preview, blur = f"{files}/original/{token}.mp3", f"{files}/small/{token}.mp3", None
            out.append({"id": str(mid), "type": kind, "url": url, "preview_url": preview, "remote_url": None,
                        "text_url": None, "meta": meta, "description": alt, "blurhash": blur})
        return out

    def _make_status(self, sid, created, author, r, reply_to=None, visibility=None):
        """A non-reblog status record. r drives everything random about it."""
        domain = ACCOUNTS[author][1]
        words = lambda lo, hi: " ".join(r.choices(WORDS, k=r.randint(lo, hi)))
        mentions, tags, emojis = [], [], []
        lead = ""
        in_reply_to_id = in_reply_to_account_id = None
        if reply_to is not None:
            in_reply_to_id, in_reply_to_account_id, target = str(reply_to[0]), self.accounts[reply_to[1]]["id"], reply_to[1]
            if target != author:
                mentions.append(self._mention(target))
                lead = self._mention_html(target) + " "
        if visibility is None:
            visibility = r.choices(["public", "unlisted", "private", "direct"], [70, 15, 10, 5])[0]
        if visibility == "direct" and not mentions:
            target = (author + 1 + r.randrange(len(self.accounts) - 1)) % len(self.accounts)
            mentions.append(self._mention(target))
            lead = self._mention_html(target) + " "
        first = words(3, 14)
        first = first[0].upper() + first[1:]
        parts = [lead + first]
        if r.random() < 0.35:
            parts.append(r.choice(SNIPPETS))
        if r.random() < 0.15:
            extra = r.choice([k for k in range(len(self.accounts)) if k != author])
            if all(m["id"] != self.accounts[extra]["id"] for m in mentions):
                mentions.append(self._mention(extra))
                parts.append("cc " + self._mention_html(extra))
        if r.random() < 0.06:
            parts.append(":blobcat:")
            emojis.append(EMOJI)
        paragraphs = [" ".join(parts) + "."]
        second = []
        if r.random() < 0.3:
            second.append(words(2, 8) + ": " + self._link_html(r.choice(LINKS)))
        chosen = []
        if r.random() < 0.22:
            chosen.append(r.choice(["Swift", "swift", "SwiftUI"]))
        if r.random() < 0.25:
            chosen += r.sample(HASHTAGS, r.randint(1, 2))
        seen = set()
        shown = []
        for display in chosen:
            if display.lower() not in seen:
                seen.add(display.lower())
                shown.append(self._tag_html(display, domain))
                tags.append({"name": display.lower(), "url": f"{BASE}/tags/{quote(display.lower())}"})
        if shown:
            second.append(" ".join(shown))
        if second:
            paragraphs.append("<br>".join(second))
        if r.random() < 0.2:
            paragraphs.append(words(2, 10) + " " + r.choice(["🎉", "☕", "…", "!", "?"]))
        content = "".join(f"<p>{p}</p>" for p in paragraphs)
        spoiler = r.choice(SPOILERS) if r.random() < 0.10 else ""
        media = self._media(r, created, bool(spoiler)) if r.random() < 0.15 else []
        sensitive = bool(spoiler) or (bool(media) and r.random() < 0.2)
        edited_at = iso_ms(created + r.randint(30_000, 7_200_000)) if r.random() < 0.05 else None
        uri, url = self._status_url(author, sid)
        a, b, c = r.random(), r.random(), r.random()
        return {
            "sid": sid, "author": author, "created_ms": created, "wrapper": False, "original": None,
            "tags": seen, "bookmarked": False, "favourited": False, "reblogged": False,
            "json": {
                "id": str(sid), "created_at": iso_ms(created),
                "in_reply_to_id": in_reply_to_id, "in_reply_to_account_id": in_reply_to_account_id,
                "sensitive": sensitive, "spoiler_text": spoiler, "visibility": visibility,
                "language": r.choice(LANGUAGES), "uri": uri, "url": url,
                "replies_count": int(a ** 3 * 40), "reblogs_count": int(b ** 3 * 80),
                "favourites_count": int(c ** 2 * 500), "edited_at": edited_at,
                "content": content,
                # application is only shown for statuses of local accounts (optional in the docs)
                **({"application": r.choice(APPS)} if domain is None else {}),
                "media_attachments": media, "mentions": mentions, "tags": tags, "emojis": emojis,
                "card": None, "poll": None,
            },
        }

    def _generate(self, i):
        """Records for timeline status i: [status] or [original, wrapper]."""
        created, sid, author, reblog = self._header(i)
        r = random.Random(f"mastodon:{self.seed}:b:{i}")
        if reblog:
            others = [k for k in range(len(self.accounts)) if k != author]
            orig_author = r.choice(others)
            orig_created = created - r.randint(60_000, 3 * 86_400_000)
            orig_sid = snowflake(orig_created, 0x8000 | ((i * 40503) & 0x7FFF))
            original = self._make_status(orig_sid, orig_created, orig_author, r,
                                         visibility=r.choice(["public", "public", "public", "unlisted"]))
            uri, _ = self._status_url(author, sid)
            wrapper = {
                "sid": sid, "author": author, "created_ms": created, "wrapper": True, "original": orig_sid,
                "tags": set(), "bookmarked": False, "favourited": False, "reblogged": False,
                "json": {
                    "id": str(sid), "created_at": iso_ms(created), "in_reply_to_id": None,
                    "in_reply_to_account_id": None, "sensitive": False, "spoiler_text": "",
                    "visibility": original["json"]["visibility"], "language": None,
                    "uri": uri + "/activity", "url": uri + "/activity",
                    "replies_count": 0, "reblogs_count": 0, "favourites_count": 0, "edited_at": None,
                    "content": "", "media_attachments": [], "mentions": [], "tags": [], "emojis": [],
                    "card": None, "poll": None,
                },
            }
            if author == OWNER:
                original["reblogged"] = True
            return [original, wrapper]
        reply_to = None
        if i > 1 and r.random() < 0.10:
            for _ in range(4):
                j = r.randint(max(1, i - 500), i - 1)
                _, jsid, jauthor, jreblog = self._header(j)
                if not jreblog:
                    reply_to = (jsid, jauthor)
                    break
        return [self._make_status(sid, created, author, r, reply_to=reply_to)]

    def append(self, count):
        """Generate the next `count` timeline statuses; returns their ids, newest first (lock held or init)."""
        self.pages.clear()
        new = []
        for _ in range(count):
            self.count += 1
            i = self.count
            for rec in self._generate(i):
                sid = rec["sid"]
                self.statuses[sid] = rec
                bisect.insort(self.by_account[rec["author"]], sid)
                for tag in rec["tags"]:
                    bisect.insort(self.by_tag.setdefault(tag, []), sid)
                if rec["wrapper"]:
                    self.wrappers[rec["original"]] = sid
            self.home.append(sid)                   # timeline ids increase with i
            if i % 3 == 0:
                self.list1.append(sid)
            new.append(str(sid))
        return new[::-1]

    # ---- reading -----------------------------------------------------------------------------

    def _encode_status(self, sid):
        cached = self.cache.get(sid)
        if cached is not None:
            return cached
        rec = self.statuses[sid]
        j = rec["json"]
        out = {}
        for key in ("id", "created_at", "in_reply_to_id", "in_reply_to_account_id", "sensitive", "spoiler_text",
                    "visibility", "language", "uri", "url", "replies_count", "reblogs_count", "favourites_count",
                    "edited_at"):
            out[key] = j[key]
        out["favourited"] = rec["favourited"]
        out["reblogged"] = rec["reblogged"]
        out["muted"] = False
        out["bookmarked"] = rec["bookmarked"]
        out["content"] = j["content"]
        out["filtered"] = []
        out["reblog"] = None
        if "application" in j:
            out["application"] = j["application"]
        out["account"] = self.accounts[rec["author"]]
        for key in ("media_attachments", "mentions", "tags", "emojis", "card", "poll"):
            out[key] = j[key]
        if rec["wrapper"]:
            original = json.loads(self._encode_status(rec["original"]))
            out["reblog"] = original
            # The wrapper reports the viewer's relationship to the original, as Mastodon does.
            out["favourited"], out["bookmarked"] = original["favourited"], original["bookmarked"]
            out["reblogged"] = original["reblogged"]
        data = encode(out)
        self.cache[sid] = data
        return data

    def _invalidate(self, sid):
        self.pages.clear()
        self.cache.pop(sid, None)
        wrapper = self.wrappers.get(sid)
        if wrapper is not None:
            self.cache.pop(wrapper, None)

    def timeline(self, name):
        """(sorted ascending keys, key -> status id function) for a timeline name, or None."""
        if name == "home":
            return self.home, None
        if name == "list:1":
            return self.list1, None
        if name.startswith("tag:"):
            tag = name[4:].lower()
            if tag not in KNOWN_TAGS and tag not in self.by_tag:
                return None
            return self.by_tag.get(tag, []), None
        if name.startswith("account:"):
            k = self.account_by_id.get(name[8:])
            return None if k is None else (self.by_account[k], None)
        if name in ("public", "public:local"):      # home's public statuses (by local authors)
            return [sid for sid in self.home if name in stream_keys(self, sid)], None
        if name in ("bookmarks", "favourites"):
            records = getattr(self, name)
            return records.keys, records.status_of.__getitem__
        return None

    def page(self, name, limit, max_id, since_id, min_id):
        """(body bytes, newest key, oldest key) or None for an unknown timeline."""
        key = (name, limit, max_id, since_id, min_id)
        with self.lock:
            hit = self.pages.get(key)
            if hit is None:
                if len(self.pages) >= 100_000:      # a client inventing cursors cannot grow it for ever
                    self.pages.clear()
                hit = self.pages[key] = self._page(name, limit, max_id, since_id, min_id)
            return hit

    def _page(self, name, limit, max_id, since_id, min_id):
        found = self.timeline(name)
        if found is None:
            return None
        keys, to_status = found
        hi = bisect.bisect_left(keys, max_id) if max_id is not None else len(keys)
        if min_id is not None:          # the `limit` keys right after min_id (since_id is ignored)
            lo = bisect.bisect_right(keys, min_id)
            chosen = keys[lo:min(lo + limit, hi)] if lo < hi else []
        else:                           # the newest `limit` keys below max_id and above since_id
            lo = bisect.bisect_right(keys, since_id) if since_id is not None else 0
            chosen = keys[max(lo, hi - limit):hi] if lo < hi else []
        chosen = chosen[::-1]
        sids = chosen if to_status is None else [to_status(k) for k in chosen]
        body = b"[" + b",".join(self._encode_status(s) for s in sids) + b"]"
        return body, (chosen[0] if chosen else None), (chosen[-1] if chosen else None)

    def status_bytes(self, sid):
        with self.lock:
            return self._encode_status(sid) if sid in self.statuses else None

    def all_ids(self, name):
        with self.lock:
            found = self.timeline(name)
            if found is None:
                return None
            keys, to_status = found
            ids = [str(k if to_status is None else to_status(k)) for k in reversed(keys)]
            extra = {"record_ids": [str(k) for k in reversed(keys)]} if to_status is not None else {}
            return {"ids": ids, **extra}

    def lookup(self, acct):
        acct = acct.strip().lstrip("@").lower()
        if acct.endswith("@" + DOMAIN):
            acct = acct[: -len(DOMAIN) - 1]
        for k, a in enumerate(self.accounts):
            if a["acct"].lower() == acct:
                return k
        return None

    def credential_account(self):
        a = dict(self.accounts[OWNER])
        a["source"] = {"privacy": "public", "sensitive": False, "language": "en",
                       "note": "Mostly Swift, SQLite and bread. Opinions are my cat's.", "fields": [],
                       "follow_requests_count": 0}
        a["role"] = {"id": "-99", "name": "", "permissions": "65536", "color": "", "highlighted": False}
        return encode(a)

    # ---- changes (control endpoints) -----------------------------------------------------------

    def post(self, count, text=None):
        """Publishes `count` new statuses; with `text`, each (or the status it boosts) says only that."""
        with self.lock:
            ids = self.append(count)
            for sid in ids if text is not None else []:
                rec = self.statuses[int(sid)]
                target = self.statuses[rec["original"]] if rec["wrapper"] else rec
                target["json"]["content"] = "<p>" + text.replace("&", "&amp;").replace("<", "&lt;") + "</p>"
                self._invalidate(target["sid"])
                self._invalidate(int(sid))
            return {"posted": count, "ids": ids, "statuses": len(self.home)}

    def edit(self, sid):
        with self.lock:
            rec = self.statuses.get(sid)
            if rec is None:
                return 404, {"error": "Record not found"}
            if rec["wrapper"]:
                return 422, {"error": "A reblog cannot be edited; edit its original instead"}
            j = rec["json"]
            n = j.get("_edits", 0) + 1
            j["_edits"] = n
            edited = f"<p>Edit {n}: fixed a typo &amp; added this line.</p>"
            j["content"] = j["content"] + edited if n == 1 else re.sub(r"<p>Edit \d+: [^<]*</p>$", edited, j["content"])
            previous = max(rec["created_ms"], rec.get("edited_ms", 0))
            rec["edited_ms"] = max(int(time.time() * 1000), previous + 1)
            j["edited_at"] = iso_ms(rec["edited_ms"])
            self._invalidate(sid)
            return 200, {"edited": str(sid), "edited_at": j["edited_at"]}

    def delete(self, sid):
        with self.lock:
            rec = self.statuses.get(sid)
            if rec is None:
                return 404, {"error": "Record not found"}
            self.pages.clear()
            gone = [sid]
            if not rec["wrapper"] and sid in self.wrappers:
                gone.append(self.wrappers[sid])           # deleting a status deletes its reblogs
            for g in gone:
                r = self.statuses.pop(g)
                self.cache.pop(g, None)
                for keys in [self.home, self.list1, self.by_account[r["author"]],
                             *(self.by_tag[t] for t in r["tags"])]:
                    _remove(keys, g)
                for records in (self.bookmarks, self.favourites):
                    records.remove_status(g)
                if r["wrapper"]:
                    self.wrappers.pop(r["original"], None)
                    original = self.statuses.get(r["original"])
                    if original is not None and r["author"] == OWNER:
                        original["reblogged"] = False
                        self._invalidate(r["original"])
            return 200, {"deleted": [str(g) for g in gone]}

    def corrupt(self, sid, field, value):
        """Set one top-level field of a status to the string `value`, as a server with a bad
        record sends it; the status stays where it is in every timeline."""
        with self.lock:
            rec = self.statuses.get(sid)
            if rec is None or field not in rec["json"]:
                return 404, {"error": "Record not found"}
            rec["json"][field] = value
            self._invalidate(sid)
            return 200, {"corrupted": str(sid), "field": field}

    def mark(self, kind, sid):
        with self.lock:
            rec = self.statuses.get(sid)
            if rec is None:
                return 404, {"error": "Record not found"}
            if rec["wrapper"]:                      # as on Mastodon: acting on a reblog acts on its original
                sid, rec = rec["original"], self.statuses[rec["original"]]
            records = self.bookmarks if kind == "bookmark" else self.favourites
            existing = records.record_of.get(sid)
            if existing is not None:
                return 200, {"status_id": str(sid), f"{kind}_id": str(existing), "created": False}
            key = records.add(sid, None)
            flag = "bookmarked" if kind == "bookmark" else "favourited"
            rec[flag] = True
            if kind == "favourite":
                rec["json"]["favourites_count"] += 1
            self._invalidate(sid)
            return 200, {"status_id": str(sid), f"{kind}_id": str(key), "created": True}

    def apply_seeded_flags(self):
        for sid in self.bookmarks.record_of:
            self.statuses[sid]["bookmarked"] = True
        for sid in self.favourites.record_of:
            self.statuses[sid]["favourited"] = True

    def warm(self, limit=MAX_LIMIT):
        """Encode every status, and every page of a backwards walk of home at `limit`, before
        the first request: a benchmark then measures its client, not this server's encoder."""
        with self.lock:
            for sid in self.statuses:
                self._encode_status(sid)
        max_id = None
        while True:
            _, newest, oldest = self.page("home", limit, max_id, None, None)
            if newest is None:
                return
            max_id = oldest


def _remove(keys, value):
    i = bisect.bisect_left(keys, value)
    if i < len(keys) and keys[i] == value:
        del keys[i]


class Records:
    """Bookmarks or favourites: records with their own increasing ids, pointing at statuses."""

    def __init__(self, start, min_gap, max_gap):
        self.next_id, self.gaps = start, (min_gap, max_gap)
        self.keys = []            # record ids, ascending
        self.status_of = {}       # record id -> status int id
        self.record_of = {}       # status int id -> record id
        self.rng = random.Random(start)

    def add(self, sid, rng):
        self.next_id += (rng or self.rng).randint(*self.gaps)
        key = self.next_id
        self.keys.append(key)
        self.status_of[key] = sid
        self.record_of[sid] = key
        return key

    def remove_status(self, sid):
        key = self.record_of.pop(sid, None)
        if key is not None:
            del self.status_of[key]
            _remove(self.keys, key)


class RateLimit:
    """Fixed window: starts at the first /api/ request, ends `window` seconds later."""

    def __init__(self, limit, window, digits):
        self.lock = threading.Lock()
        self.digits = digits
        self.set(limit, window, start=None)

    def set(self, limit, window, start):
        with self.lock:
            self.limit, self.window = limit, window
            self.start, self.used = start, 0

    def hit(self):
        """(allowed, headers) for one request, counting it."""
        now = time.time()
        with self.lock:
            if self.start is None or now >= self.start + self.window:
                self.start, self.used = now, 0
            self.used += 1
            allowed = self.used <= self.limit
            remaining = max(self.limit - self.used, 0)
            reset = iso_frac(self.start + self.window, self.digits)
            limit = self.limit
        return allowed, [("X-RateLimit-Limit", str(limit)), ("X-RateLimit-Remaining", str(remaining)),
                         ("X-RateLimit-Reset", reset)]


def ruby_to_i(text):
    """Ruby's String#to_i: leading integer or 0."""
    m = re.match(r"\s*([+-]?\d+)", text)
    return int(m.group(1)) if m else 0


class Streams:
    """The streaming API (docs.joinmastodon.org/methods/streaming): server-sent events on
    /api/v1/streaming/<stream>, `event: update|delete|status.update` with `data:` a status JSON
    (or the deleted id), and `:thump` comments to keep the connection alive."""

    NAMES = {"user", "public", "public:local", "hashtag", "list"}

    def __init__(self, thump):
        self.lock = threading.Lock()
        self.subscribers = []          # (stream key, queue)
        self.connects = []             # {"t", "stream", "status"}: every stream request, for tests
        self.thump = thump             # seconds between :thump comments
        self.announce = None           # None: announce this server's own ws:// URL; "": announce nothing
        self.refuse = 0                # a status to answer every stream request with (0: accept)
        self.announce_v2 = True        # whether /api/v2/instance exists

    def subscribe(self, key):
        import queue
        q = queue.Queue()
        with self.lock:
            self.subscribers.append((key, q))
        return q

    def unsubscribe(self, q):
        with self.lock:
            self.subscribers = [(k, s) for k, s in self.subscribers if s is not q]

    def record(self, stream, status):
        with self.lock:
            self.connects.append({"t": time.time(), "stream": stream, "status": status})

    def publish(self, keys, event, data):
        """Sends one event to every open stream whose key is in `keys` (None: every stream)."""
        frame = f"event: {event}\ndata: ".encode() + data + b"\n\n"
        with self.lock:
            for key, q in self.subscribers:
                if keys is None or key in keys:
                    q.put(("frame", frame))
            return sum(1 for key, _ in self.subscribers if keys is None or key in keys)

    def broadcast(self, kind, payload=None):
        """`drop` closes every open stream; `raw` writes bytes as they are (hostile tests)."""
        with self.lock:
            for _, q in self.subscribers:
                q.put((kind, payload))
            return len(self.subscribers)

    def open_count(self):
        with self.lock:
            return len(self.subscribers)


def stream_keys(store, sid):
    """The streams a status in the home timeline appears on: user, its hashtags, list 1, public."""
    rec = store.statuses.get(sid)
    if rec is None:
        return set()
    keys = {"user"}
    original = store.statuses.get(rec["original"]) if rec["wrapper"] else rec
    for tag in (original or rec)["tags"]:
        keys.add(f"hashtag:{tag}")
    if sid in store.list1:
        keys.add("list:1")
    if (original or rec)["json"]["visibility"] == "public":
        keys.add("public")
        if ACCOUNTS[rec["author"]][1] is None:
            keys.add("public:local")
    return keys


class API:
    ROUTES = [
        (re.compile(r"/api/v1/accounts/verify_credentials"), "verify_credentials"),
        (re.compile(r"/api/v1/accounts/lookup"), "lookup"),
        (re.compile(r"/api/v1/timelines/home"), "home"),
        (re.compile(r"/api/v1/timelines/list/([^/]+)"), "list"),
        (re.compile(r"/api/v1/timelines/tag/([^/]+)"), "tag"),
        (re.compile(r"/api/v1/timelines/public"), "public"),
        (re.compile(r"/api/v1/accounts/([^/]+)/statuses"), "account_statuses"),
        (re.compile(r"/api/v1/accounts/([^/]+)"), "account"),
        (re.compile(r"/api/v1/statuses/([^/]+)"), "status"),
        (re.compile(r"/api/v1/bookmarks"), "bookmarks"),
        (re.compile(r"/api/v1/instance"), "instance_v1"),
        (re.compile(r"/api/v2/instance"), "instance_v2"),
        (re.compile(r"/api/v1/favourites"), "favourites"),
    ]

    def __init__(self, store, port_ref, streams):
        self.store, self.port_ref, self.streams = store, port_ref, streams

    def announced(self):
        s = self.streams.announce
        return f"ws://127.0.0.1:{self.port_ref[0]}" if s is None else (s or None)

    def handle(self, method, path, query):
        """(status, [(header, value)], body) for an authorised /api/ request."""
        for pattern, name in self.ROUTES:
            m = pattern.fullmatch(path)
            if m:
                break
        else:
            return 404, [], error_body("Record not found")
        if method != "GET":
            return 404, [], error_body("Record not found")
        params = {k: v[-1] for k, v in parse_qs(query, keep_blank_values=True).items()}
        store = self.store
        if name == "verify_credentials":
            return 200, [], store.credential_account()
        if name == "instance_v1":
            return 200, [], _json({"uri": DOMAIN, "title": "Fixture", "version": "4.3.0",
                                   "urls": {"streaming_api": self.announced()}}).encode()
        if name == "instance_v2":
            if not self.streams.announce_v2:
                return 404, [], error_body("Record not found")
            return 200, [], _json({"domain": DOMAIN, "title": "Fixture", "version": "4.3.0",
                                   "configuration": {"urls": {"streaming": self.announced()}}}).encode()
        if name == "lookup":
            k = store.lookup(params.get("acct", ""))
            return (404, [], error_body("Record not found")) if k is None else (200, [], store.account_bytes[k])
        if name == "account":
            k = store.account_by_id.get(unquote(m.group(1)))
            return (404, [], error_body("Record not found")) if k is None else (200, [], store.account_bytes[k])
        if name == "status":
            sid = unquote(m.group(1))
            body = store.status_bytes(int(sid)) if sid.isdigit() else None
            return (404, [], error_body("Record not found")) if body is None else (200, [], body)
        timeline = {"home": "home", "bookmarks": "bookmarks", "favourites": "favourites"}.get(name)
        if name == "list":
            timeline = f"list:{unquote(m.group(1))}"
        elif name == "tag":
            timeline = f"tag:{unquote(m.group(1))}"
        elif name == "public":
            timeline = "public:local" if params.get("local") in ("true", "1") else "public"
        elif name == "account_statuses":
            timeline = f"account:{unquote(m.group(1))}"
        return self.paged(timeline, path, query, params)

    def paged(self, timeline, path, query, params):
        limit = DEFAULT_LIMIT
        if "limit" in params and params["limit"] != "":
            limit = min(abs(ruby_to_i(params["limit"])), MAX_LIMIT)
        cursors = {}
        for name in CURSOR_PARAMS:
            raw = params.get(name, "")
            if raw == "":                       # Rails' .present?: empty means absent
                continue
            if not raw.isdigit():
                return 400, [], error_body(f"{name} must be a numeric id")
            cursors[name] = int(raw)
        result = self.store.page(timeline, limit, cursors.get("max_id"), cursors.get("since_id"), cursors.get("min_id"))
        if result is None:
            return 404, [], error_body("Record not found")
        body, newest, oldest = result
        headers = []
        if newest is not None:
            # Each other parameter once, with its last value, as Rails builds the link from its params hash.
            others = {}
            for k, v in parse_qsl(query, keep_blank_values=True):
                if k not in CURSOR_PARAMS:
                    others[k] = v
            others = list(others.items())
            base = f"http://127.0.0.1:{self.port_ref[0]}{path}?"
            nxt = base + urlencode(others + [("max_id", str(oldest))])
            prev = base + urlencode(others + [("min_id", str(newest))])
            headers.append(("Link", f'<{nxt}>; rel="next", <{prev}>; rel="prev"'))
        return 200, headers, body


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "feedsync-mastodon-fixture/1"

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
        if not url.path.startswith("/_control/") and self.server.app.echo.respond(self, url.path, body):
            self.server.app.count(f"{self.command} {url.path}", "echo")
            return
        if url.path == "/api/v1/apps" or url.path.startswith("/oauth/"):
            self._oauth(url.path, url.query, body)
        elif url.path.startswith("/api/v1/streaming"):
            self._stream(url.path, url.query)
        elif url.path.startswith("/api/"):
            self._api(url.path, url.query)
        elif url.path.startswith("/_control/"):
            self._control(url.path, url.query, body)
        else:
            self._send(404, [], error_body("Record not found"))

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def _read_body(self):
        # Always consume the body, or the next request on this keep-alive connection would be misread.
        length = self.headers.get("Content-Length") or "0"
        if self.headers.get("Transfer-Encoding") or not length.isdigit() or int(length) > MAX_BODY:
            self.close_connection = True
            self._send(400, [], error_body("Need a Content-Length of at most 1 MiB, no chunking"))
            return None
        return self.rfile.read(int(length)) if length != "0" else b""

    def _send(self, status, headers, body):
        lines = [f"HTTP/1.1 {status} {responses.get(status, 'Error')}"]
        if body is not None:
            lines += ["Content-Type: application/json; charset=utf-8", f"Content-Length: {len(body)}"]
        lines += [f"{name}: {value}" for name, value in headers]
        if self.close_connection:
            lines.append("Connection: close")
        elif self.request_version == "HTTP/1.0":
            lines.append("Connection: keep-alive")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        self.wfile.write(head + (body or b""))
        return len(head) + len(body or b"")

    def _stream(self, path, query):
        """Holds a stream open (chunked), as Mastodon's streaming server does."""
        app, streams = self.server.app, self.server.app.streams
        params = {k: v[-1] for k, v in parse_qs(query, keep_blank_values=True).items()}
        name = path[len("/api/v1/streaming"):].strip("/").replace("/", ":")
        if name == "health":
            return self._send_text(200, b"OK")
        key = None
        if name in ("user", "public", "public:local"):
            key = name
        elif name == "hashtag" and params.get("tag"):
            key = f"hashtag:{params['tag'].lower()}"
        elif name == "list" and params.get("list"):
            key = f"list:{params['list']}"
        if self.command != "GET" or key is None:
            streams.record(name, 404)
            return self._send(404, [], error_body("Unknown stream type"))
        if not app.authorised(self.headers.get("Authorization")):
            streams.record(name, 401)
            return self._send(401, [], error_body("Error 401: The access token is invalid"))
        if streams.refuse:
            streams.record(name, streams.refuse)
            self.close_connection = True
            return self._send(streams.refuse, [], error_body("Streaming is unavailable"))
        streams.record(name, 200)
        self.close_connection = True
        q = streams.subscribe(key)
        try:
            head = ("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
                    "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n").encode()
            self.wfile.write(head + self._chunk(b":)\n"))
            self.wfile.flush()
            import queue
            while True:
                try:
                    kind, payload = q.get(timeout=streams.thump)
                except queue.Empty:
                    kind, payload = "frame", b":thump\n"
                if kind == "drop":
                    break
                out = payload if kind == "raw" else self._chunk(payload)
                self.wfile.write(out)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass
        finally:
            streams.unsubscribe(q)
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    @staticmethod
    def _chunk(data):
        return f"{len(data):x}\r\n".encode() + data + b"\r\n"

    def _send_text(self, status, body):
        head = f"HTTP/1.1 {status} OK\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        self.wfile.write(head + body)

    def _api(self, path, query):
        app = self.server.app
        allowed, headers = app.rate.hit()
        if not allowed:
            status, extra, body = 429, [], error_body("Too many requests")
        elif not app.authorised(self.headers.get("Authorization")) and path not in ("/api/v1/instance", "/api/v2/instance"):
            # The instance endpoints are public on Mastodon.
            status, extra, body = 401, [], error_body("The access token is invalid")
        else:
            try:
                status, extra, body = app.api.handle(self.command, path, query)
            except Exception:
                import traceback
                traceback.print_exc()
                status, extra, body = 500, [], error_body("Internal server error")
        app.count(f"{self.command} {path}", str(status))
        app.count_bytes(self._send(status, headers + extra, body))

    def _oauth(self, path, query, body):
        app = self.server.app
        status, extra, payload = app.oauth.handle(self.command, path, query, body, self.headers.get("Content-Type"))
        app.count(f"{self.command} {path}", str(status))
        if extra and extra[0][0] == "Content-Type":     # an HTML page (the out-of-band code)
            head = [f"HTTP/1.1 {status} OK", f"Content-Type: {extra[0][1]}", f"Content-Length: {len(payload)}"]
            self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
            return
        self._send(status, extra, payload)

    def _control(self, path, query, body):
        app, store = self.server.app, self.server.app.store
        if not ipaddress.ip_address(self.client_address[0]).is_loopback:
            return self._send(403, [], error_body("Control endpoints are loopback-only"))
        params = {k: v[-1] for k, v in parse_qs(query, keep_blank_values=True).items()}
        route = (self.command, path)
        status = 200

        def status_id():
            raw = params.get("id", "")
            return int(raw) if raw.isdigit() else -1

        if route == ("POST", "/_control/post"):
            raw = params.get("count", "1")
            if not re.fullmatch(r"[0-9]{1,6}", raw):
                return self._send(400, [], error_body("count must be an integer in 0...999999"))
            result = store.post(int(raw), params.get("text"))
            for sid in reversed(result["ids"]):            # oldest first, as they would be published
                keys, data = stream_keys(store, int(sid)), store.status_bytes(int(sid))
                result.setdefault("streamed", 0)
                result["streamed"] += app.streams.publish(keys, "update", data)
        elif route == ("POST", "/_control/edit"):
            status, result = store.edit(status_id())
            if status == 200:
                sid = status_id()
                keys, data = stream_keys(store, sid), store.status_bytes(sid)
                result["streamed"] = app.streams.publish(keys, "status.update", data)
        elif route == ("POST", "/_control/delete"):
            status, result = store.delete(status_id())
            if status == 200:
                result["streamed"] = sum(app.streams.publish(None, "delete", g.encode()) for g in result["deleted"])
        elif route == ("POST", "/_control/corrupt"):
            status, result = store.corrupt(status_id(), params.get("field", ""), params.get("value", ""))
        elif route == ("POST", "/_control/stream-drop"):
            result = {"dropped": app.streams.broadcast("drop")}
        elif route == ("POST", "/_control/stream-raw"):
            result = {"sent": app.streams.broadcast("raw", body)}
        elif route == ("POST", "/_control/stream-event"):
            repeat = params.get("repeat", "1")          # the body repeated, for events larger than a request body
            if not re.fullmatch(r"[0-9]{1,4}", repeat):
                return self._send(400, [], error_body("repeat must be an integer in 0...9999"))
            result = {"sent": app.streams.publish(None, params.get("event", "update"), body * int(repeat))}
        elif route == ("GET", "/_control/streams"):
            with app.streams.lock:
                result = {"open": len(app.streams.subscribers), "connects": list(app.streams.connects)}
        elif route == ("POST", "/_control/streaming"):
            try:
                settings = json.loads(body or b"{}")
                if not isinstance(settings, dict):
                    raise ValueError
            except (ValueError, UnicodeDecodeError):
                return self._send(400, [], error_body('Expected {"announce": URL|""|null, "refuse": status, "v2": bool, "thump": s}'))
            streams = app.streams
            if "announce" in settings:
                streams.announce = settings["announce"]
            if "refuse" in settings:
                streams.refuse = int(settings["refuse"] or 0)
            if "v2" in settings:
                streams.announce_v2 = bool(settings["v2"])
            if "thump" in settings:
                streams.thump = float(settings["thump"])
            result = {"announce": streams.announce, "refuse": streams.refuse, "v2": streams.announce_v2, "thump": streams.thump}
        elif route in {("POST", "/_control/bookmark"), ("POST", "/_control/favourite")}:
            status, result = store.mark(path.rsplit("/", 1)[1], status_id())
        elif path == "/_control/echo":
            try:
                result = app.echo.control(self.command, body)
            except (ValueError, UnicodeDecodeError) as e:
                return self._send(400, [], error_body(str(e)))
        elif path == "/_control/oauth":
            status, extra, payload = app.oauth.control(self.command, params)
            return self._send(status, extra, payload)
        elif route == ("GET", "/_control/stats"):
            with app.stats_lock:
                requests = {k: dict(v) for k, v in app.stats.items()}
                bytes_sent = app.bytes_sent
            result = {"total_requests": sum(sum(v.values()) for v in requests.values()), "requests": requests}
            if "bytes_sent" in params:      # opt-in, so the default answer keeps its exact shape
                result["bytes_sent"] = bytes_sent
        elif route == ("POST", "/_control/reset-stats"):
            with app.stats_lock:
                app.stats = {}
                app.bytes_sent = 0
            result = {"reset": True}
        elif route == ("GET", "/_control/timeline"):
            result = store.all_ids(params.get("name", "home"))
            if result is None:
                status, result = 404, {"error": "Record not found"}
        elif route == ("GET", "/_control/status"):
            data = store.status_bytes(status_id())
            if data is None:
                return self._send(404, [], error_body("Record not found"))
            return self._send(200, [], data)
        elif route == ("GET", "/_control/accounts"):
            return self._send(200, [], b"[" + b",".join(store.account_bytes) + b"]")
        elif route == ("POST", "/_control/rate-limit"):
            try:
                settings = json.loads(body or b"{}")
                limit, window = settings.get("limit", app.rate.limit), settings.get("window", app.rate.window)
                ok = (isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0
                      and isinstance(window, (int, float)) and not isinstance(window, bool) and window > 0)
                if not ok:
                    raise ValueError
            except (ValueError, AttributeError, UnicodeDecodeError):
                return self._send(400, [], error_body('Expected {"limit": L >= 0, "window": W > 0}'))
            app.rate.set(limit, window, start=time.time())
            result = {"limit": limit, "window": window, "reset": iso_frac(app.rate.start + window, app.rate.digits)}
        else:
            return self._send(404, [], error_body(f"No such control endpoint: {self.command} {path}"))
        self._send(status, [], _json(result).encode())


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


class App:
    def __init__(self, args):
        self.token = args.token
        self.oauth = OAuth()
        # Mastodon's errors: {"error": "…", "error_description": "…"} (OAuth) or {"error": "…"} (the API).
        self.echo = CredentialEcho(lambda message: {"error": message, "error_description": message})
        self.store = Store(args.statuses, args.seed)
        self.store.apply_seeded_flags()
        self.port_ref = [args.port]
        self.streams = Streams(args.thump)
        self.api = API(self.store, self.port_ref, self.streams)
        self.rate = RateLimit(args.rate_limit, args.rate_window, args.reset_digits)
        self.stats, self.stats_lock = {}, threading.Lock()
        self.bytes_sent = 0       # /api/ response bytes: status line, headers, body

    def authorised(self, header):
        if not header:
            return False
        scheme, _, token = header.strip().partition(" ")
        return scheme.lower() == "bearer" and (token.strip() == self.token or self.oauth.valid(token.strip()))

    def count(self, key, status):
        with self.stats_lock:
            per_status = self.stats.setdefault(key, {})
            per_status[status] = per_status.get(status, 0) + 1

    def count_bytes(self, n):
        with self.stats_lock:
            self.bytes_sent += n


def main():
    p = argparse.ArgumentParser(description="Fake Mastodon server for feedsync tests.")
    p.add_argument("--port", type=int, default=8090, help="TCP port on 127.0.0.1; 0 picks a free one")
    p.add_argument("--statuses", type=int, default=200, help="statuses in the home timeline at start")
    p.add_argument("--seed", type=int, default=1, help="seed for all generated data")
    p.add_argument("--token", default="test-token", help="the only valid bearer token")
    p.add_argument("--rate-limit", type=int, default=300, help="requests per window (X-RateLimit-Limit)")
    p.add_argument("--rate-window", type=float, default=300, help="window length in seconds")
    p.add_argument("--reset-digits", type=int, default=3, choices=range(0, 7), metavar="0-6",
                   help="fraction digits in X-RateLimit-Reset (3 = milliseconds; real Mastodon sends 6)")
    p.add_argument("--thump", type=float, default=15, help="seconds between :thump comments on an idle stream")
    p.add_argument("--warm", action="store_true",
                   help="encode every status and the home timeline's pages at limit=40 before listening (benchmarks)")
    p.add_argument("--exit-on-stdin-eof", action="store_true",
                   help="exit when standard input closes (tests pass a pipe, so the server dies with its test)")
    args = p.parse_args()
    if args.statuses < 0 or args.rate_limit < 0 or args.rate_window <= 0:
        p.error("need --statuses >= 0, --rate-limit >= 0 and --rate-window > 0")

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
        if args.warm:
            app.store.warm()
        server = Server(("127.0.0.1", args.port), Handler)
        server.app = app
        app.port_ref[0] = server.server_address[1]
        try:
            print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
            server.serve_forever()
        finally:
            server.server_close()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
