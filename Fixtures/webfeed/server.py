#!/usr/bin/env python3
"""Local web-feed server for feedsync's tests and benchmarks. Standard library only.

    python3 Fixtures/webfeed/server.py --port 0 --feeds 20 --items 50 [--exit-on-stdin-eof]

The first line on stdout is "listening on 127.0.0.1:PORT" (then one line per --extra-ports port).
Each port is a host of its own as feedsync counts hosts (its gate key is host:port).

  GET /feeds/<n>.xml          RSS 2.0 feed n (0-based) with its items, newest first; ETag and
                              Last-Modified, 304 for If-None-Match / If-Modified-Since that match
  GET /atom/<n>.xml           the same feed as Atom 1.0
  GET /static/<file>          a file of Fixtures/webfeed/feeds, as it is
  GET /redirect/<code>/<path> answers <code> (301, 302, 307, 308) with Location: /<path>
  GET /gone                   410 Gone
  GET /limited                429 with Retry-After: 1
  GET /limited/<s>            429 with Retry-After: <s>
  GET /slow/<ms>/<path>       waits <ms> milliseconds, then serves /<path>
  GET /cached/<s>/<path>      serves /<path> with Cache-Control: max-age=<s>
  GET /site/<n>/              feed n's site: an HTML page whose <link rel="alternate"> names ../../atom/<n>.xml
  GET /blog/<n>               a blog page naming ../feeds/<n>.xml (RSS) first, then /atom/<n>.xml
  GET /site/none/             an HTML page that names no feed
  GET /site/many/             an HTML page with <base href="/feeds/"> naming 3.xml?x=1&y=2 (unquoted, upper case) and /atom/3.xml
  GET /private/<path>         serves /<path> only with the Authorization of --basic USER:PASS or
                              --bearer TOKEN; 401 with WWW-Authenticate otherwise
  GET /away/<code>/<path>     answers <code> with an absolute Location on the next port
                              (--extra-ports 1): another origin
  GET /opml                   an OPML file listing every feed (?count=N for the first N;
                              ?ports=1 spreads them over every listening port)
  GET  /_control/stats        {"total": n, "requests": {"GET /feeds/1.xml": {"200": 1, "304": 2}}}
  GET  /_control/hosts        {"localhost:PORT": n, ...}: requests answered, by the Host header they named
  GET  /_control/seen         {"requests": [{"port", "path", "authorization", "user-agent", "x-team"}]}: the last
                              1,000 requests on any port with the fields a private feed's tests check
  GET  /_control/log          {"now": t, "requests": [{"key": "GET /feeds/1.xml", "status": 304, "start": t0, "end": t1}]}
                              (the last 10,000 requests, times in seconds on the server's monotonic clock)
  POST /_control/reset-stats
  POST /_control/edit?feed=n&item=i    changes item i's content (an update)
  POST /_control/add?feed=n            publishes a new item
  POST /_control/window?feed=n&size=k  the feed lists only its newest k items from now on
"""
import argparse
import base64
import collections
import hashlib
import json
import os
import socket
import sys
import threading
import time
from email.utils import formatdate, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape

HERE = os.path.dirname(os.path.abspath(__file__))
T0 = 1767225600  # 2026-01-01T00:00:00Z


class State:
    def __init__(self, feeds, items):
        self.lock = threading.Lock()
        self.items = [items] * feeds          # how many items each feed has published
        self.edits = [dict() for _ in range(feeds)]  # item -> edit count
        self.window = [None] * feeds
        self.changed = [T0] * feeds           # Last-Modified of each feed
        self.stats = {}
        self.total = 0
        self.log = collections.deque(maxlen=10000)   # when each request came and was answered
        self.hosts = {}                       # Host header -> requests answered for it
        self.seen = collections.deque(maxlen=1000)    # what each request carried (private feeds)
        self.basic = None                     # the accepted Authorization values (--basic, --bearer)
        self.bearer = None

    def count(self, key, status, host=None):
        with self.lock:
            if host:
                self.hosts[host] = self.hosts.get(host, 0) + 1
            self.total += 1
            self.stats.setdefault(key, {}).setdefault(str(status), 0)
            self.stats[key][str(status)] += 1

    def record(self, key, status, start):
        with self.lock:
            self.log.append({"key": key, "status": status, "start": start, "end": time.monotonic()})


def item_entries(state, n):
    count, edits, window = state.items[n], state.edits[n], state.window[n]
    newest = range(count - 1, -1, -1)
    if window is not None:
        newest = list(newest)[:window]
    for i in newest:
        yield i, edits.get(i, 0)


def rss(state, n, base):
    parts = ['<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/" '
             'xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel>',
             f"<title>Feed {n}</title><link>{base}/site/{n}/</link><description>Test feed {n}</description>"]
    for i, edit in item_entries(state, n):
        when = formatdate(T0 + n * 60 + i * 3600, usegmt=True)
        body = f"<p>Item {i} of feed {n}, version {edit}.</p>"
        parts.append(f"<item><title>Feed {n} item {i}</title><link>{base}/site/{n}/{i}</link>"
                     f"<guid isPermaLink=\"false\">feed-{n}-item-{i}</guid><pubDate>{when}</pubDate>"
                     f"<dc:creator>Author {i % 5}</dc:creator><content:encoded>{escape(body)}</content:encoded></item>")
    parts.append("</channel></rss>\n")
    return "".join(parts).encode()


def atom(state, n, base):
    parts = ['<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">',
             f'<title>Feed {n}</title><id>urn:feed:{n}</id><link href="{base}/site/{n}/"/>'
             f'<updated>{time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(state.changed[n]))}</updated>']
    for i, edit in item_entries(state, n):
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(T0 + n * 60 + i * 3600))
        parts.append(f'<entry><title>Feed {n} item {i}</title><id>urn:feed:{n}:{i}</id><link href="/site/{n}/{i}"/>'
                     f'<updated>{stamp}</updated><author><name>Author {i % 5}</name></author>'
                     f'<content type="html">{escape(f"<p>Item {i} of feed {n}, version {edit}.</p>")}</content></entry>')
    parts.append("</feed>\n")
    return "".join(parts).encode()


def make_handler(state, ports):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def send(self, status, body=b"", headers=None, key=None):
            state.count(key or f"{self.command} {urlsplit(self.path).path}", status, self.headers.get("Host", "?"))
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
            state.record(key or f"{self.command} {urlsplit(self.path).path}", status, getattr(self, "started", time.monotonic()))

        def base(self):
            return f"http://127.0.0.1:{self.server.server_address[1]}"

        def do_POST(self):
            url = urlsplit(self.path)
            q = {k: v[0] for k, v in parse_qs(url.query).items()}
            feed = int(q.get("feed", 0))
            with state.lock:
                if url.path == "/_control/reset-stats":
                    state.stats, state.total, state.hosts = {}, 0, {}
                    state.log.clear()
                elif url.path == "/_control/edit":
                    item = int(q["item"])
                    state.edits[feed][item] = state.edits[feed].get(item, 0) + 1
                    state.changed[feed] += 1
                elif url.path == "/_control/add":
                    state.items[feed] += 1
                    state.changed[feed] += 1
                elif url.path == "/_control/window":
                    state.window[feed] = int(q["size"])
                    state.changed[feed] += 1
                else:
                    return self.send(404, b"{}", key="control")
            body = b"{}"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            self.started = time.monotonic()
            url = urlsplit(self.path)
            path, query = url.path, parse_qs(url.query)
            if not path.startswith("/_control/"):
                with state.lock:
                    state.seen.append({"port": self.server.server_address[1], "path": path,
                                       "authorization": self.headers.get("Authorization"),
                                       "user-agent": self.headers.get("User-Agent"), "x-team": self.headers.get("X-Team")})
            if path in ("/_control/stats", "/_control/log", "/_control/hosts", "/_control/seen"):
                with state.lock:
                    if path == "/_control/seen":
                        body = json.dumps({"requests": list(state.seen)}).encode()
                    elif path == "/_control/hosts":
                        body = json.dumps(state.hosts).encode()
                    elif path == "/_control/log":
                        body = json.dumps({"now": time.monotonic(), "requests": list(state.log)}).encode()
                    else:
                        body = json.dumps({"total": state.total, "requests": state.stats}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                return self.wfile.write(body)
            self.serve(path, query, {}, key=f"GET {path}")

        def serve(self, path, query, extra, key):
            parts = path.strip("/").split("/")
            if parts[0] == "redirect" and len(parts) >= 3:
                return self.send(int(parts[1]), headers={"Location": "/" + "/".join(parts[2:]), **extra}, key=key)
            if parts[0] == "private" and len(parts) >= 2:
                given = self.headers.get("Authorization")
                if given is None or given not in (state.basic, state.bearer):
                    return self.send(401, b"who are you?", {"WWW-Authenticate": 'Basic realm="feeds"'}, key=key)
                return self.serve("/" + "/".join(parts[1:]), query, extra, key)
            if parts[0] == "away" and len(parts) >= 3:
                there = ports[(ports.index(self.server.server_address[1]) + 1) % len(ports)]
                location = f"http://127.0.0.1:{there}/" + "/".join(parts[2:])
                return self.send(int(parts[1]), headers={"Location": location, **extra}, key=key)
            if parts[0] == "slow" and len(parts) >= 3:
                time.sleep(int(parts[1]) / 1000)
                return self.serve("/" + "/".join(parts[2:]), query, extra, key)
            if parts[0] == "cached" and len(parts) >= 3:
                return self.serve("/" + "/".join(parts[2:]), query, {**extra, "Cache-Control": f"max-age={parts[1]}"}, key)
            if path == "/gone":
                return self.send(410, b"gone", key=key)
            if path == "/limited":
                return self.send(429, b"slow down", {"Retry-After": "1"}, key=key)
            if parts[0] == "limited" and len(parts) == 2 and parts[1].isdigit():
                return self.send(429, b"slow down", {"Retry-After": parts[1]}, key=key)
            if parts[0] == "site" and len(parts) == 2:
                link = ""
                if parts[1].isdigit() and int(parts[1]) < len(state.items):
                    link = f'<link rel="alternate" type="application/atom+xml" title="Feed {parts[1]}" href="../../atom/{parts[1]}.xml">'
                elif parts[1] == "many":
                    link = ('<base href="/feeds/"><LINK REL=alternate TYPE="application/rss+xml; charset=utf-8" HREF=3.xml?x=1&amp;y=2>'
                            "<link rel='alternate' type='application/atom+xml' href='/atom/3.xml' />")
                elif parts[1] != "none":
                    return self.send(404, key=key)
                page = (f'<!doctype html><html><head><title>Site</title><link rel="stylesheet" href="/style.css">{link}</head>'
                        '<body><p>Hello.</p><link rel="alternate" type="application/rss+xml" href="/not-in-head.xml"></body></html>\n')
                return self.send(200, page.encode(), {"Content-Type": "text/html; charset=utf-8", **extra}, key=key)
            if path == "/opml":
                count = int(query.get("count", [len(state.items)])[0])
                spread = query.get("ports", ["0"])[0] == "1"
                lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<opml version="2.0"><head><title>Subscriptions</title></head><body>',
                         '<outline text="Tests" title="Tests">']
                for n in range(count):
                    port = ports[n % len(ports)] if spread else self.server.server_address[1]
                    lines.append(f'<outline type="rss" text="Feed {n}" title="Feed {n}" xmlUrl="http://127.0.0.1:{port}/feeds/{n}.xml"/>')
                lines.append("</outline></body></opml>\n")
                return self.send(200, "\n".join(lines).encode(), {"Content-Type": "text/x-opml", **extra}, key=key)
            if parts[0] == "blog" and len(parts) == 2 and parts[1].isdigit():
                # A blog's home page naming its feed by a relative link, RSS first (discovery).
                page = ('<!DOCTYPE html><html><head><title>Site</title>'
                        '<link rel="stylesheet" href="/style.css">'
                        '<link rel="alternate" type="application/rss+xml" title="RSS" href="../feeds/%s.xml">'
                        '<link rel="alternate" type="application/atom+xml" href="/atom/%s.xml">'
                        '</head><body><p>Hello</p></body></html>') % (parts[1], parts[1])
                return self.send(200, page.encode(), {"Content-Type": "text/html; charset=utf-8", **extra}, key=key)
            if path == "/nofeed":
                page = b'<!DOCTYPE html><html><head><title>No feed</title></head><body></body></html>'
                return self.send(200, page, {"Content-Type": "text/html", **extra}, key=key)
            if parts[0] == "static" and len(parts) == 2 and not parts[1].startswith("."):
                file = os.path.join(HERE, "feeds", parts[1])
                if not os.path.isfile(file):
                    return self.send(404, key=key)
                with open(file, "rb") as f:
                    body = f.read()
                return self.send(200, body, {"Content-Type": "application/octet-stream", **extra}, key=key)
            if parts[0] in ("feeds", "atom") and len(parts) == 2 and parts[1].endswith(".xml"):
                try:
                    n = int(parts[1][:-4])
                except ValueError:
                    return self.send(404, key=key)
                if not 0 <= n < len(state.items):
                    return self.send(404, key=key)
                with state.lock:
                    body = (rss if parts[0] == "feeds" else atom)(state, n, self.base())
                    changed = state.changed[n]
                etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
                modified = formatdate(changed, usegmt=True)
                headers = {"ETag": etag, "Last-Modified": modified, **extra}
                inm = self.headers.get("If-None-Match")
                ims = self.headers.get("If-Modified-Since")
                fresh = inm == etag if inm else False
                if not inm and ims:
                    try:
                        fresh = parsedate_to_datetime(ims).timestamp() >= changed
                    except (TypeError, ValueError):
                        fresh = False
                if fresh:
                    return self.send(304, b"", headers, key=key)
                kind = "application/rss+xml" if parts[0] == "feeds" else "application/atom+xml"
                return self.send(200, body, {"Content-Type": kind, **headers}, key=key)
            return self.send(404, key=key)

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8090)
    parser.add_argument("--extra-ports", type=int, default=0, help="also listen on this many more ports (more hosts)")
    parser.add_argument("--feeds", type=int, default=20)
    parser.add_argument("--items", type=int, default=50)
    parser.add_argument("--exit-on-stdin-eof", action="store_true")
    parser.add_argument("--basic", help="USER:PASS that /private/ accepts as Basic credentials")
    parser.add_argument("--bearer", help="a token that /private/ accepts as Bearer credentials")
    args = parser.parse_args()
    state = State(args.feeds, args.items)
    if args.basic:
        state.basic = "Basic " + base64.b64encode(args.basic.encode()).decode()
    if args.bearer:
        state.bearer = "Bearer " + args.bearer
    servers = []
    ports = []
    for index in range(1 + args.extra_ports):
        ThreadingHTTPServer.daemon_threads = True
        ThreadingHTTPServer.request_queue_size = 1024
        server = ThreadingHTTPServer(("127.0.0.1", args.port if index == 0 else 0), None)
        servers.append(server)
        ports.append(server.server_address[1])
    for server in servers:
        server.RequestHandlerClass = make_handler(state, ports)
        threading.Thread(target=server.serve_forever, daemon=True).start()
    for port in ports:
        print(f"listening on 127.0.0.1:{port}", flush=True)
    if args.exit_on_stdin_eof:
        sys.stdin.read()
        return
    threading.Event().wait()


if __name__ == "__main__":
    main()
