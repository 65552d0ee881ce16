#!/usr/bin/env python3
"""Media fixture server for feedsync's media archive tests and benchmark. Standard library only.

    python3 Fixtures/media/server.py --port 0 [--extra-ports N] [--exit-on-stdin-eof]

The first line on stdout is "listening on 127.0.0.1:PORT" (then one line per extra port: each
port is a host of its own as feedsync counts hosts).

  GET /private/feed.xml      the same feed behind Basic auth (user "reader", password "s3cret"; 401 without)
  GET /feed.xml              an RSS 2.0 feed of the items POSTed to /_control/feed: each item's media
                             are <enclosure> (url, type, length) or, for "medium", <media:content>
  GET /m/<name>              a file whose bytes follow from its name (see `body`), with its type:
      img-<n>.png            image/png, --image-bytes bytes (default 2048) derived from n
      same-<x>.png           image/png, the same bytes whatever <x> is (the archive stores them once)
      audio-<n>.mp3          audio/mpeg, --audio-bytes bytes (default 300,000; a cheap per-block pattern, see Pattern,
                             so 1 GB costs no hashing); Range honoured (206)
      cut-<n>.mp3            as audio-<n>.mp3, but the first answer without Range stops after half
                             its bytes (Content-Length announced in full), so a second fetch resumes
      ..%2F..%2Fevil%00.png  image/png: a name with an escaped "/" and NUL (any name with %2F or %00)
      lie.png                text/html: a page where the post said an image
      more.mp3               sends 5,000 bytes with no Content-Length where the post said 1,000
      redirect-file.png      302 to file:///etc/passwd
      redirect-ftp.png       302 to ftp://127.0.0.1/x.png
      away-<port>.png        302 to http://127.0.0.1:<port>/m/img-away.png (another origin)
      tohost-<n>.png         302 to http://localhost:<this port>/m/img-<n>.png (another origin: another host name)
      private-<n>.png        as img-<n>.png, behind the private feed's Basic auth (401 without)
      hls.m3u8               a multivariant playlist (RFC 8216): 360p and 720p variants
      hls-360.m3u8, hls-720.m3u8   media playlists of 3 segments each (seg-<res>-<i>.ts)
      loop.m3u8              a multivariant playlist whose best variant is itself
      many.m3u8              a media playlist of 100,000 segments
      gone-<n>.png           as img-<n>.png until POST /_control/delete, then 404 (deleted at the source)
  GET /watch/<did>/<cid>/playlist.m3u8   a Bluesky video (app.bsky.embed.video#view's playlist, as video.bsky.app
                             serves it): a multivariant playlist (RFC 8216) of 360p/video.m3u8 and 720p/video.m3u8,
                             each URI with a ?session_id= query; each media playlist lists video0.ts … video2.ts
                             (4000 bytes each, derived from the path), with the same query
  GET /api/v1/videos/<id>    PeerTube's VideoDetails for the one video it knows (UUID 9c9de5e8-…, short UUID
                             kkGMgK9ZtnKfYAgnEtQxbv, or 7): an HLS playlist (/m/hls.m3u8) with 360p and 720p files
  GET /oembed?url=…&format=json   YouTube's oEmbed for watch?v=dQw4w9WgXcQ (a thumbnail at /m/img-yt.png);
                             401 for privatevid1 (embedding disabled), 404 for any other
  GET  /_control/stats       {"requests": {"/m/x": n}, "ranges": ["bytes=…"], "bytes": body bytes sent under /m/,
                              "connections": TCP connections accepted (every port), "connectionsByPort": {"PORT": n},
                              "authorization": [values seen], "authorized": ["PORT PATH" of each request that had one],
                              "authorizedHosts": ["HOST PATH" of each, HOST as its Host header said]}
                             (one state for every port)
  POST /_control/feed        body: [{"id": "1", "link": "/w/<id>", "media": [{"url": "/m/img-1.png", "type": "image/png",
                             "length": 2048, "medium": "image"}]}] (url may be absolute, for another port)
  POST /_control/delete      every gone-<n>.png answers 404 from now on
"""
import argparse
import base64
import hashlib
import json
import socket
import sys
import threading
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from xml.sax.saxutils import escape, quoteattr

STATE = {"items": [], "deleted": False, "requests": {}, "ranges": [], "bytes": 0, "connections": 0, "connectionsByPort": {}, "authorization": [], "authorized": [], "authorizedHosts": [], "cut": set()}
LOCK = threading.Lock()
IMAGE_BYTES = 2048
AUDIO_BYTES = 300_000
PRIVATE_AUTHORIZATION = "Basic " + base64.b64encode(b"reader:s3cret").decode()


FILLERS = {}


def derived(seed, size):
    """`size` bytes that follow from `seed`: SHA-256(seed), then a filler of the size made once
    (SHA-256 in counter mode), so every seed's bytes differ and a 100 KB body costs one hash, not
    3,125 (the benchmark's server would otherwise spend ~15 ms of Python per image, the ceiling
    of both clients it compares)."""
    head = hashlib.sha256(seed.encode()).digest()
    if size <= len(head):
        return head[:size]
    filler = FILLERS.get(size)
    if filler is None:
        out = bytearray()
        counter = 0
        while len(out) < size - len(head):
            out += hashlib.sha256(f"filler:{counter}".encode()).digest()
            counter += 1
        filler = FILLERS.setdefault(size, bytes(out[:size - len(head)]))
    return head + filler


class Pattern:
    """`size` bytes that follow from `seed` and cheap at any size (a resumed 1 GB file): block i of
    4096 bytes is a 4088-byte run of SHA-256(seed), then i as 8 bytes, so every block differs
    (a resume at the wrong offset changes the file's digest) and a slice costs no hashing."""

    BLOCK = 4096

    def __init__(self, seed, size):
        digest = hashlib.sha256(seed.encode()).digest()
        self.fill = (digest * (self.BLOCK // len(digest) + 1))[: self.BLOCK - 8]
        self.size = size

    def __len__(self):
        return self.size

    def chunks(self, start, end, step=1 << 20):
        """The bytes start..<end, in pieces of about `step`."""
        offset = start
        while offset < end:
            first = offset // self.BLOCK
            last = min((min(end, offset + step) - 1) // self.BLOCK, (self.size - 1) // self.BLOCK)
            run = b"".join(self.fill + i.to_bytes(8, "big") for i in range(first, last + 1))
            piece = run[offset - first * self.BLOCK: min(end, (last + 1) * self.BLOCK) - first * self.BLOCK]
            yield piece
            offset += len(piece)

    def __getitem__(self, cut):
        start, stop, _ = cut.indices(self.size)
        return b"".join(self.chunks(start, stop))


class Tail(Pattern):
    """A pattern's bytes from `start` on (a 206's body), streamed as the pattern's."""

    def __init__(self, pattern, start):
        self.fill, self.BLOCK, self.whole, self.start = pattern.fill, pattern.BLOCK, pattern, start
        self.size = pattern.size - start

    def chunks(self, start, end, step=1 << 20):
        return self.whole.chunks(self.start + start, self.start + end, step)


def body(name):
    """(status, type, bytes, extra headers) for /m/<name>; None for an unknown name."""
    if "%2F" in name.upper() or "%00" in name:
        # A name with an escaped "/" or NUL ("..%2F..%2Fevil%00.png"): an image like any other;
        # the archive names files by their digest, never by what the address says.
        return "image/png", derived("escaped", IMAGE_BYTES)
    if (name.startswith("img-") or name.startswith("private-")) and name.endswith(".png"):
        return "image/png", derived(name, IMAGE_BYTES)
    if name.startswith("same-") and name.endswith(".png"):
        return "image/png", derived("same", IMAGE_BYTES)
    if name.startswith("gone-") and name.endswith(".png"):
        return ("image/png", derived(name, IMAGE_BYTES)) if not STATE["deleted"] else None
    if (name.startswith("audio-") or name.startswith("cut-")) and name.endswith(".mp3"):
        return "audio/mpeg", Pattern(name, AUDIO_BYTES)
    if name == "lie.png":
        return "text/html; charset=utf-8", b"<!doctype html><title>Not an image</title><p>Sign in to see this image.</p>"
    if name == "hls.m3u8":
        return "application/vnd.apple.mpegurl", (b"#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360\nhls-360.m3u8\n"
                                                 b"#EXT-X-STREAM-INF:BANDWIDTH=2500000,RESOLUTION=1280x720\nhls-720.m3u8\n")
    if name.startswith("hls-") and name.endswith(".m3u8"):
        res = name[4:-5]
        lines = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:4", "#EXT-X-MEDIA-SEQUENCE:0"]
        for i in range(3):
            lines += ["#EXTINF:4.0,", f"seg-{res}-{i}.ts"]
        return "application/vnd.apple.mpegurl", ("\n".join(lines + ["#EXT-X-ENDLIST", ""])).encode()
    if name.startswith("seg-") and name.endswith(".ts"):
        return "video/mp2t", derived(name, 4000)
    if name == "loop.m3u8":
        return "application/vnd.apple.mpegurl", b"#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,RESOLUTION=1x1\nloop.m3u8\n"
    if name == "many.m3u8":
        lines = ["#EXTM3U", "#EXT-X-TARGETDURATION:1"] + [f"#EXTINF:1,\ns{i}.ts" for i in range(100_000)] + ["#EXT-X-ENDLIST", ""]
        return "application/vnd.apple.mpegurl", "\n".join(lines).encode()
    return None


def feed_xml(host):
    items = []
    for item in STATE["items"]:
        media = []
        for m in item.get("media", []):
            url = m["url"] if m["url"].startswith("http") else f"http://{host}{m['url']}"
            if "medium" in m:
                media.append(f'<media:content url={quoteattr(url)} type={quoteattr(m.get("type", ""))} medium={quoteattr(m["medium"])}/>')
            else:
                media.append(f'<enclosure url={quoteattr(url)} type={quoteattr(m.get("type", ""))} length="{m.get("length", 0)}"/>')
        date = formatdate(1_767_225_600 + int(item.get("at", 0)), usegmt=True)
        link = item.get("link", "")
        link = f"<link>{escape(link if link.startswith('http') else f'http://{host}{link}')}</link>" if link else ""
        items.append(f"<item><guid isPermaLink=\"false\">{escape(item['id'])}</guid><title>Item {escape(item['id'])}</title>{link}"
                     f"<pubDate>{date}</pubDate><description>Item {escape(item['id'])}</description>{''.join(media)}</item>")
    return ('<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel>'
            f'<title>Media fixture</title><link>http://{host}/</link><description>media</description>{"".join(items)}</channel></rss>').encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        # The head and the body are two writes: without TCP_NODELAY the body's last piece waits
        # for the client's delayed ACK of the head (40 ms an answer), the pace of any client.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with LOCK:
            STATE["connections"] += 1
            port = str(self.server.server_address[1])
            STATE["connectionsByPort"][port] = STATE["connectionsByPort"].get(port, 0) + 1

    def log_message(self, *args):
        pass

    def send(self, status, ctype, data, headers=(), length=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data) if length is None else length))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if isinstance(data, Pattern):
            for piece in data.chunks(0, len(data)):
                self.wfile.write(piece)
                if self.path.startswith("/m/"):
                    with LOCK:
                        STATE["bytes"] += len(piece)
            return
        self.wfile.write(data)
        if self.path.startswith("/m/"):
            with LOCK:
                STATE["bytes"] += len(data)

    def peertube_video(self, ident):
        if ident not in (PEERTUBE_UUID, PEERTUBE_SHORT, "7"):
            return self.send(404, "application/json", b'{"status": 404, "title": "Video not found"}')
        return self.send(200, "application/json", json.dumps(peertube_details(self.headers.get("Host", "127.0.0.1"))).encode())

    def bluesky_video(self, path):
        parts = path.split("/")   # "", "watch", did, cid, then "playlist.m3u8" or "<res>p", "video.m3u8" / "video<i>.ts"
        mpegurl = "application/vnd.apple.mpegurl"
        if len(parts) == 5 and parts[4] == "playlist.m3u8":
            return self.send(200, mpegurl, (b"#EXTM3U\n#EXT-X-VERSION:3\n"
                                            b"#EXT-X-STREAM-INF:BANDWIDTH=600000,RESOLUTION=640x360\n360p/video.m3u8?session_id=s1\n"
                                            b"#EXT-X-STREAM-INF:BANDWIDTH=2000000,RESOLUTION=1280x720\n720p/video.m3u8?session_id=s1\n"))
        if len(parts) == 6 and parts[4] in ("360p", "720p") and parts[5] == "video.m3u8":
            lines = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:4", "#EXT-X-MEDIA-SEQUENCE:0"]
            for i in range(3):
                lines += ["#EXTINF:4.000,", f"video{i}.ts?session_id=s1"]
            return self.send(200, mpegurl, ("\n".join(lines + ["#EXT-X-ENDLIST", ""])).encode())
        if len(parts) == 6 and parts[4] in ("360p", "720p") and parts[5].startswith("video") and parts[5].endswith(".ts"):
            return self.send(200, "video/mp2t", derived(path, 4000))
        return self.send(404, "text/plain", b"not found\n")

    def oembed(self):
        from urllib.parse import parse_qs, urlsplit
        query = parse_qs(urlsplit(self.path).query)
        watch = (query.get("url") or [""])[0]
        video = parse_qs(urlsplit(watch).query).get("v", [""])[0]
        if video == "privatevid1":
            return self.send(401, "text/plain", b"Unauthorized")
        if video != "dQw4w9WgXcQ" or query.get("format") != ["json"]:
            return self.send(404, "text/plain", b"Not Found")
        host = self.headers.get("Host", "127.0.0.1")
        return self.send(200, "application/json", json.dumps({
            "type": "video", "version": "1.0", "title": "A song from 1987", "author_name": "A singer",
            "author_url": "https://www.youtube.com/@singer", "provider_name": "YouTube", "provider_url": "https://www.youtube.com/",
            "thumbnail_url": f"http://{host}/m/img-yt.png", "thumbnail_width": 480, "thumbnail_height": 360,
            "html": "<iframe></iframe>", "width": 200, "height": 113}).encode())

    def do_POST(self):
        data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/_control/feed":
            with LOCK:
                STATE["items"] = json.loads(data or b"[]")
        elif self.path == "/_control/delete":
            with LOCK:
                STATE["deleted"] = True
        else:
            return self.send(404, "text/plain", b"not found\n")
        self.send(200, "application/json", b"{}")

    def do_GET(self):
        path = self.path.split("?")[0]
        with LOCK:
            STATE["requests"][path] = STATE["requests"].get(path, 0) + 1
            if self.headers.get("Range"):
                STATE["ranges"].append(self.headers["Range"])
            if self.headers.get("Authorization"):
                STATE["authorization"].append(self.headers["Authorization"])
                STATE["authorized"].append(f"{self.server.server_address[1]} {path}")
                STATE["authorizedHosts"].append(f"{self.headers.get('Host', '')} {path}")
        if path == "/_control/stats":
            with LOCK:
                out = {k: STATE[k] for k in ("requests", "ranges", "bytes", "connections", "connectionsByPort", "authorization", "authorized", "authorizedHosts")}
            return self.send(200, "application/json", json.dumps(out).encode())
        if path == "/oembed":
            return self.oembed()
        if path.startswith("/api/v1/videos/"):
            return self.peertube_video(path[len("/api/v1/videos/"):])
        if path == "/private/feed.xml" or path.startswith("/m/private-"):
            if self.headers.get("Authorization") != PRIVATE_AUTHORIZATION:
                return self.send(401, "text/plain", b"sign in\n", [("WWW-Authenticate", 'Basic realm="private"')])
            if path == "/private/feed.xml":
                return self.send(200, "application/rss+xml", feed_xml(self.headers.get("Host", "127.0.0.1")))
        if path == "/feed.xml":
            return self.send(200, "application/rss+xml", feed_xml(self.headers.get("Host", "127.0.0.1")))
        if path.startswith("/watch/"):
            return self.bluesky_video(path)
        if not path.startswith("/m/"):
            return self.send(404, "text/plain", b"not found\n")
        name = path[3:]
        if name == "redirect-file.png":
            return self.send(302, "text/plain", b"", [("Location", "file:///etc/passwd")])
        if name.startswith("away-") and name.endswith(".png"):
            return self.send(302, "text/plain", b"", [("Location", f"http://127.0.0.1:{name[5:-4]}/m/img-away.png")])
        if name.startswith("tohost-") and name.endswith(".png"):
            return self.send(302, "text/plain", b"", [("Location", f"http://localhost:{self.server.server_address[1]}/m/img-{name[7:-4]}.png")])
        if name == "redirect-ftp.png":
            return self.send(302, "text/plain", b"", [("Location", "ftp://127.0.0.1/x.png")])
        if name == "more.mp3":
            self.send_response(200)
            self.send_header("Content-Type", "audio/mpeg")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(derived("more", 5000))
            self.close_connection = True
            return
        found = body(name)
        if found is None:
            return self.send(404, "text/plain", b"not found\n")
        ctype, data = found
        wanted = self.headers.get("Range", "")
        if wanted.startswith("bytes=") and wanted.endswith("-") and name.endswith(".mp3"):
            start = int(wanted[6:-1])
            if start >= len(data):
                return self.send(416, "text/plain", b"", [("Content-Range", f"bytes */{len(data)}")])
            return self.send(206, ctype, Tail(data, start), [("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")])
        if name.startswith("cut-"):
            with LOCK:
                first = name not in STATE["cut"]
                STATE["cut"].add(name)
            if first:
                # Announce every byte, send half, and close: the client keeps what came.
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                for piece in data.chunks(0, len(data) // 2):
                    self.wfile.write(piece)
                self.wfile.flush()
                with LOCK:
                    STATE["bytes"] += len(data) // 2
                self.close_connection = True
                return
        self.send(200, ctype, data)


# The PeerTube videos the server knows, by UUID, short UUID and number (VideoDetails, as the
# PeerTube REST API reference describes GET /api/v1/videos/{id}).
PEERTUBE_UUID = "9c9de5e8-0a1e-484a-b099-e80766180a6d"
PEERTUBE_SHORT = "kkGMgK9ZtnKfYAgnEtQxbv"


def peertube_details(host):
    base = f"http://{host}"
    return {
        "id": 7, "uuid": PEERTUBE_UUID, "shortUUID": PEERTUBE_SHORT, "name": "A walk in the hills",
        "duration": 754, "views": 1234, "likes": 56, "dislikes": 1,
        "thumbnailPath": "/lazy-static/thumbnails/walk.jpg", "previewPath": "/lazy-static/previews/walk.jpg",
        "embedPath": f"/videos/embed/{PEERTUBE_UUID}", "isLive": False,
        "files": [],
        "streamingPlaylists": [{
            "id": 3, "type": 1, "playlistUrl": f"{base}/m/hls.m3u8", "segmentsSha256Url": f"{base}/m/segments-sha256.json",
            "files": [
                {"resolution": {"id": 360, "label": "360p"}, "size": 12000, "fps": 30, "fileUrl": f"{base}/m/walk-360.mp4"},
                {"resolution": {"id": 720, "label": "720p"}, "size": 12000, "fps": 30, "fileUrl": f"{base}/m/walk-720.mp4"},
            ],
        }],
    }


def main():
    global IMAGE_BYTES, AUDIO_BYTES
    p = argparse.ArgumentParser(description="Media fixture server for feedsync tests.")
    p.add_argument("--port", type=int, default=8093)
    p.add_argument("--extra-ports", type=int, default=0, help="more ports serving the same files (other hosts)")
    p.add_argument("--image-bytes", type=int, default=2048)
    p.add_argument("--audio-bytes", type=int, default=300_000)
    p.add_argument("--exit-on-stdin-eof", action="store_true")
    args = p.parse_args()
    IMAGE_BYTES, AUDIO_BYTES = args.image_bytes, args.audio_bytes
    servers = [ThreadingHTTPServer(("127.0.0.1", args.port), Handler)]
    servers += [ThreadingHTTPServer(("127.0.0.1", 0), Handler) for _ in range(args.extra_ports)]
    for server in servers:
        server.daemon_threads = True
        print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    for server in servers[1:]:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    if args.exit_on_stdin_eof:
        threading.Thread(target=lambda: (sys.stdin.read(), servers[0].shutdown()), daemon=True).start()
    servers[0].serve_forever()


if __name__ == "__main__":
    main()
