#!/usr/bin/env python3
"""Fake Jetstream (github.com/bluesky-social/jetstream) beside the fake Bluesky service, for feedsync's live mirror.

Standard library only. Written from Jetstream's README: `GET /subscribe` upgrades to a WebSocket
(RFC 6455) and sends one JSON event per text message — `{"did", "time_us", "kind": "commit",
"commit": {"rev", "operation", "collection", "rkey", "record", "cid"}}`, and the `identity` and
`account` kinds — filtered by `wantedCollections` (NSIDs, or prefixes ending in `.*`, at most
100) and `wantedDids` (at most 10,000), replayed from `cursor` (unix microseconds; absent or in
the future = live tail), updated by `options_update` messages (`requireHello=true` waits for
the first), answered `heartbeat` messages. The server pings every `--ping-interval` seconds.

The same process serves server.py's XRPC methods (hydration: getPosts, getFollows, getList),
on the same port, so what is published here is what the client hydrates. See README.md.
"""
import argparse
import base64
import hashlib
import ipaddress
import json
import os
import signal
import socket
import struct
import sys
import threading
import time
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import server as bsky  # noqa: E402

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
MAX_DIDS, MAX_COLLECTIONS = 10_000, 100
MAX_CLIENT_MESSAGE = 10 << 20


def frame(opcode, payload, fin=True):
    """A server frame: never masked (RFC 6455 §5.1)."""
    head = bytes([(0x80 if fin else 0) | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([n])
    elif n < 65536:
        head += bytes([126]) + struct.pack("!H", n)
    else:
        head += bytes([127]) + struct.pack("!Q", n)
    return head + payload


def read_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def read_frame(sock):
    """One client frame, unmasked: (fin, opcode, payload). A client frame must be masked."""
    b0, b1 = read_exact(sock, 2)
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack("!H", read_exact(sock, 2))[0]
    elif n == 127:
        n = struct.unpack("!Q", read_exact(sock, 8))[0]
    if not b1 & 0x80:
        raise ValueError("unmasked client frame")
    if n > MAX_CLIENT_MESSAGE:
        raise ValueError("client frame too big")
    mask = read_exact(sock, 4)
    payload = bytearray(read_exact(sock, n))
    for i in range(n):
        payload[i] ^= mask[i & 3]
    return bool(b0 & 0x80), b0 & 0x0F, bytes(payload)


class Filter:
    def __init__(self, collections, dids, max_size=0):
        self.collections, self.dids, self.max_size = list(collections), set(dids), max(0, max_size)

    @staticmethod
    def valid(collections, dids):
        return len(collections) <= MAX_COLLECTIONS and len(dids) <= MAX_DIDS and all(isinstance(x, str) for x in collections + dids)

    def wants(self, event, size):
        if self.max_size and size > self.max_size:
            return False
        if self.dids and event["did"] not in self.dids:
            return False
        if event["kind"] != "commit" or not self.collections:
            return True     # account and identity events go to every subscriber
        collection = event["commit"]["collection"]
        return any(collection == c or (c.endswith(".*") and collection.startswith(c[:-1])) for c in self.collections)



def subscription(query):
    """A subscriber's state from its /subscribe query (parse_qs), and its cursor; (None, None) when the filters are too big."""
    collections, dids = query.get("wantedCollections", []), query.get("wantedDids", [])
    if not Filter.valid(collections, dids):
        return None, None
    cursor_text = (query.get("cursor") or [""])[-1]
    cursor = int(cursor_text) if cursor_text.lstrip("-").isdigit() else None
    max_size = (query.get("maxMessageSizeBytes") or ["0"])[-1]
    return {"filter": Filter(collections, dids, int(max_size) if max_size.lstrip("-").isdigit() else 0),
            "hello": (query.get("requireHello") or [""])[-1] != "true", "open": True}, cursor


def subscriber_message(data, state, stream):
    """A SubscriberSourcedMessage: options_update or heartbeat. The reply to send (b"" for none), or None when it is
    invalid, which disconnects."""
    try:
        message = json.loads(data)
        kind, payload = message["type"], message.get("payload")
    except (ValueError, KeyError, TypeError):
        return None
    if kind == "heartbeat":
        with stream.cond:
            stream.stats["heartbeats"] += 1
        return bsky.encode({"kind": "heartbeat", "payload": payload if isinstance(payload, str) else ""})
    if kind != "options_update" or not isinstance(payload, dict):
        return None
    collections, dids = payload.get("wantedCollections") or [], payload.get("wantedDids") or []
    if not isinstance(collections, list) or not isinstance(dids, list) or not Filter.valid(collections, dids):
        return None
    with stream.cond:
        stream.stats["options_updates"] += 1
        stream.subscriptions.append({"options_update": {"wantedCollections": collections, "wantedDids": dids}, "at": time.time()})
        state["filter"] = Filter(collections, dids, int(payload.get("maxMessageSizeBytes") or 0))
        state["hello"] = True
        stream.cond.notify_all()
    return b""


class Stream:
    """The event log (replayable by time_us) and the open subscribers."""

    def __init__(self, ping_interval):
        self.cond = threading.Condition()
        self.events = []           # (time_us, event dict, encoded bytes), oldest first
        self.last_us = 0
        self.generation = 0        # bumped by drop: every subscriber of an older generation closes
        self.refuse_until = 0.0
        self.ping_interval = ping_interval
        self.subscriptions = []    # every /subscribe request: path, headers, time
        self.stats = {"connections": 0, "open": 0, "options_updates": 0, "pongs": 0, "heartbeats": 0, "close_codes": []}

    def start(self, cursor):
        """Where a subscriber starts in the log: replay from the cursor; absent or in the future, the live tail. Hold cond."""
        if cursor is None or cursor > self.last_us:
            return len(self.events)
        return next((i for i, e in enumerate(self.events) if e[0] >= cursor), len(self.events))

    def publish(self, did, kind, body, ignore_filters=False):
        with self.cond:
            now = max(int(time.time() * 1_000_000), self.last_us + 1)
            self.last_us = now
            event = {"did": did, "time_us": now, "kind": kind, kind: body}
            self.events.append((now, event, bsky.encode(event), ignore_filters))
            self.cond.notify_all()
            return event


class Handler(bsky.Handler):
    server_version = "feedsync-jetstream-fixture/1"

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/subscribe":
            return self._subscribe(url)
        if url.path.startswith("/_hostile/"):
            return self._hostile(url.path[10:])
        if url.path.startswith("/_jetstream/"):
            body = self._read_body()
            if body is None:
                return
            params = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
            return self._jetstream(url.path[12:], params)
        return super().do_GET()

    do_POST = do_GET

    # The WebSocket

    def _handshake(self):
        key = self.headers.get("Sec-WebSocket-Key", "")
        if self.headers.get("Upgrade", "").lower() != "websocket" or self.headers.get("Sec-WebSocket-Version") != "13" or not key:
            self.close_connection = True
            self._send(400, [], bsky.xrpc_error("BadRequest", "Not a WebSocket upgrade"))
            return False
        accept = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
        self.wfile.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          f"Sec-WebSocket-Accept: {accept}\r\n\r\n").encode())
        self.wfile.flush()
        self.close_connection = True
        return True

    def _subscribe(self, url):
        stream = self.server.stream
        query = parse_qs(url.query)
        with stream.cond:
            stream.subscriptions.append({"path": self.path, "headers": dict(self.headers.items()), "at": time.time()})
            if time.time() < stream.refuse_until:
                self.close_connection = True
                return self._send(503, [], bsky.xrpc_error("Unavailable", "Refusing connections"))
        state, cursor = subscription(query)
        if state is None:
            self.close_connection = True
            return self._send(400, [], bsky.xrpc_error("BadRequest", "Too many wantedDids or wantedCollections"))
        # Where the subscriber starts is fixed before the 101 goes out: an event published as
        # soon as the client has its answer is then never missed.
        with stream.cond:
            generation = stream.generation
            position = stream.start(cursor)
        if not self._handshake():
            return
        sock = self.connection
        write_lock = threading.Lock()

        def send(data):
            with write_lock:
                sock.sendall(data)

        with stream.cond:
            stream.stats["connections"] += 1
            stream.stats["open"] += 1
        reader = threading.Thread(target=self._read_client, args=(sock, state, send, stream), daemon=True)
        reader.start()
        last_ping = time.time()
        try:
            while True:
                with stream.cond:
                    while state["open"] and stream.generation == generation and (not state["hello"] or position >= len(stream.events)):
                        wait = stream.ping_interval - (time.time() - last_ping) if stream.ping_interval else None
                        if wait is not None and wait <= 0:
                            break
                        stream.cond.wait(wait)
                    if stream.generation != generation or not state["open"]:
                        break
                    batch = stream.events[position:] if state["hello"] else []
                    position += len(batch)
                    current = state["filter"]
                if stream.ping_interval and time.time() - last_ping >= stream.ping_interval:
                    send(frame(0x9, b"jetstream"))
                    last_ping = time.time()
                for _, event, data, everyone in batch:
                    if everyone or current.wants(event, len(data)):
                        send(frame(0x1, data))
        except OSError:
            pass
        finally:
            state["open"] = False
            with stream.cond:
                stream.stats["open"] -= 1
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _read_client(self, sock, state, send, stream):
        """Client frames: pings answered, pongs counted, text messages as subscriber-sourced messages, close echoed."""
        message, opcode_of_message = b"", None
        try:
            while state["open"]:
                fin, opcode, payload = read_frame(sock)
                if opcode == 0x9:
                    send(frame(0xA, payload))
                elif opcode == 0xA:
                    with stream.cond:
                        stream.stats["pongs"] += 1
                elif opcode == 0x8:
                    code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                    with stream.cond:
                        stream.stats["close_codes"].append(code)
                    send(frame(0x8, payload[:2]))
                    break
                elif opcode in (0x0, 0x1):
                    message += payload
                    if opcode == 0x1:
                        opcode_of_message = 0x1
                    if fin and opcode_of_message == 0x1:
                        if not self._client_message(message, state, send, stream):
                            break
                        message, opcode_of_message = b"", None
                else:
                    break
        except (OSError, ValueError, ConnectionError):
            pass
        with stream.cond:
            state["open"] = False
            stream.cond.notify_all()

    def _client_message(self, data, state, send, stream):
        reply = subscriber_message(data, state, stream)
        if reply:
            send(frame(0x1, reply))
        return reply is not None

    # Misbehaving servers, for the WebSocket client's own tests

    def _hostile(self, mode):
        self.close_connection = True
        if mode == "nohandshake":
            time.sleep(3600)
            return
        if mode == "redirect":
            return self._send(302, [("Location", "http://elsewhere.example/subscribe")], b"{}")
        if mode == "badaccept":
            self.wfile.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                             b"Sec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n")
            return
        if not self._handshake():
            return
        sock = self.connection
        try:
            if mode == "oversized":
                sock.sendall(bytes([0x81, 127]) + struct.pack("!Q", 2 << 20) + b"x" * 1024)
            elif mode == "badopcode":
                sock.sendall(bytes([0x83, 0]))
            elif mode == "masked":
                sock.sendall(bytes([0x81, 0x82, 1, 2, 3, 4, ord("h") ^ 1, ord("i") ^ 2]))
            elif mode == "flood":
                data = frame(0x1, b'{"kind":"flood"}') * 1000
                for _ in range(2000):
                    sock.sendall(data)
            elif mode == "fragments":
                sock.sendall(frame(0x1, b"Hel", fin=False) + frame(0x9, b"mid") + frame(0x0, b"lo"))
                read_frame(sock)  # the pong
                sock.sendall(frame(0x8, struct.pack("!H", 1000)))
            elif mode == "ping":
                sock.sendall(frame(0x9, b"are you there"))
                _, opcode, payload = read_frame(sock)
                sock.sendall(frame(0x1, bsky.encode({"opcode": opcode, "payload": payload.decode()})))
                sock.sendall(frame(0x8, struct.pack("!H", 1000)))
            elif mode == "close":
                sock.sendall(frame(0x8, struct.pack("!H", 4000) + b"bye"))
                _, opcode, payload = read_frame(sock)
                sock.sendall(frame(0x1, b"unreachable"))
            elif mode.startswith("closepayload/"):
                # A close frame whose payload is the hex after the slash; the client's answer is recorded.
                sock.sendall(frame(0x8, bytes.fromhex(mode[13:])))
                _, opcode, payload = read_frame(sock)
                if opcode == 0x8:
                    with self.server.stream.cond:
                        self.server.stream.stats["close_codes"].append(struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None)
            elif mode == "quiet":
                time.sleep(3600)
            elif mode == "echo":
                while True:
                    fin, opcode, payload = read_frame(sock)
                    if opcode == 0x8:
                        sock.sendall(frame(0x8, payload[:2]))
                        break
                    if opcode == 0x1:
                        sock.sendall(frame(0x1, payload))
        except (OSError, ValueError, ConnectionError):
            pass

    # Control endpoints

    def _jetstream(self, path, params):
        if not ipaddress.ip_address(self.client_address[0]).is_loopback:
            return self._send(403, [], bsky.xrpc_error("Forbidden", "Control endpoints are loopback-only"))
        app, store, stream = self.server.app, self.server.app.store, self.server.stream
        route = (self.command, path)
        if route == ("POST", "post"):
            did = params.get("did", bsky.AUTHORS[0][0])
            with store.lock:
                if did not in store.handles:
                    return self._send(404, [], bsky.xrpc_error("NotFound", "No such author"))
                uri = store._new_post(store._next_time(), store.rng, did=did)
                store.entries.insert(0, (store.latest_us, uri, uri, None))
                view = store.posts[uri]
            key = uri.rsplit("/", 1)[1]
            event = stream.publish(did, "commit", {"rev": key, "operation": "create", "collection": "app.bsky.feed.post",
                                                   "rkey": key, "record": view["record"], "cid": view["cid"]},
                                   ignore_filters=params.get("everyone") == "1")
            result = {"uri": uri, "time_us": event["time_us"]}
        elif route == ("POST", "repost"):
            by, uri = params.get("by", bsky.AUTHORS[0][0]), params.get("uri", "")
            entry = store.repost(uri, by)
            if entry is None:
                return self._send(404, [], bsky.xrpc_error("NotFound", "No such post or reposter"))
            key = entry.rsplit("/", 1)[1]
            record = {"$type": "app.bsky.feed.repost", "subject": {"uri": uri, "cid": store.posts[uri]["cid"]},
                      "createdAt": bsky.iso(store.latest_us)}
            event = stream.publish(by, "commit", {"rev": key, "operation": "create", "collection": "app.bsky.feed.repost",
                                                  "rkey": key, "record": record, "cid": "bafyrepost" + key})
            result = {"uri": entry, "time_us": event["time_us"]}
        elif route == ("POST", "delete"):
            uri = params.get("uri", "")
            parts = uri[5:].split("/") if uri.startswith("at://") else []
            if len(parts) != 3 or parts[1] not in ("app.bsky.feed.post", "app.bsky.feed.repost"):
                return self._send(400, [], bsky.xrpc_error("InvalidRequest", "uri is at://DID/app.bsky.feed.post|repost/RKEY"))
            with store.lock:
                if parts[1] == "app.bsky.feed.post":
                    found = store.delete(uri)
                else:
                    before = len(store.entries)
                    store.entries = [e for e in store.entries if e[1] != uri]
                    found = len(store.entries) < before
            if not found:
                return self._send(404, [], bsky.xrpc_error("NotFound", "No such record"))
            event = stream.publish(parts[0], "commit", {"rev": parts[2] + "d", "operation": "delete", "collection": parts[1], "rkey": parts[2]})
            result = {"time_us": event["time_us"]}
        elif route == ("POST", "update"):
            uri = params.get("uri", "")
            with store.lock:
                if uri not in store.posts:
                    return self._send(404, [], bsky.xrpc_error("NotFound", "No such post"))
                view = store.posts[uri]
                view["record"] = dict(view["record"], text=params.get("text", "edited"))
                view.pop("_bytes", None)
            key = uri.rsplit("/", 1)[1]
            event = stream.publish(view["_did"], "commit", {"rev": key + "u", "operation": "update", "collection": "app.bsky.feed.post",
                                                            "rkey": key, "record": view["record"], "cid": view["cid"]})
            result = {"time_us": event["time_us"]}
        elif route == ("POST", "identity"):
            did, handle = params.get("did", ""), params.get("handle", "")
            if not store.set_handle(did, handle):
                return self._send(404, [], bsky.xrpc_error("NotFound", "No such author"))
            event = stream.publish(did, "identity", {"did": did, "handle": handle, "seq": 1, "time": bsky.iso(int(time.time() * 1e6))})
            result = {"time_us": event["time_us"]}
        elif route == ("POST", "account"):
            did = params.get("did", "")
            event = stream.publish(did, "account", {"active": params.get("active") != "0", "did": did, "seq": 1,
                                                    "time": bsky.iso(int(time.time() * 1e6))})
            result = {"time_us": event["time_us"]}
        elif route == ("POST", "follow"):
            did, on = params.get("did", ""), params.get("on", "1") == "1"
            with store.lock:
                if did not in store.handles:
                    store.handles[did] = params.get("handle") or did.rsplit(":", 1)[-1] + ".test"
                if on and did not in store.follows:
                    store.follows.append(did)
                if not on and did in store.follows:
                    store.follows.remove(did)
                result = {"follows": len(store.follows)}
        elif route == ("POST", "drop"):
            with stream.cond:
                stream.generation += 1
                stream.refuse_until = time.time() + float(params.get("refuse", "0"))
                stream.cond.notify_all()
            result = {"dropped": True}
        elif route == ("GET", "subscriptions"):
            with stream.cond:
                result = {"subscriptions": stream.subscriptions}
        elif route == ("GET", "stats"):
            with stream.cond:
                result = dict(stream.stats, events=len(stream.events))
        else:
            return self._send(404, [], bsky.xrpc_error("NotFound", f"No such control endpoint: {self.command} /_jetstream/{path}"))
        self._send(200, [], bsky.encode(result))


def arguments(description):
    """The options every Jetstream fixture takes; `--port` is where the HTTP side listens."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--port", type=int, default=8092, help="TCP port on 127.0.0.1; 0 picks a free one")
    p.add_argument("--posts", type=int, default=50, help="timeline entries at start")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--ping-interval", type=float, default=30, help="seconds between the server's pings (0: none)")
    p.add_argument("--exit-on-stdin-eof", action="store_true", help="exit when standard input closes")
    return p


def http_server(args, handler):
    """The HTTP side (XRPC, control endpoints, and the event log in .stream), ending on SIGTERM or, if asked, stdin's end."""
    app_args = argparse.Namespace(posts=args.posts, seed=args.seed, identifier="me.test", password="app-pass-word",
                                  access_ttl=7200, refresh_ttl=90 * 86400, rate_limit=100_000, rate_window=300, login_limit=1000)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    if args.exit_on_stdin_eof:
        def watch_stdin():
            while sys.stdin.buffer.read(4096):
                pass
            os._exit(0)
        threading.Thread(target=watch_stdin, daemon=True).start()
    httpd = bsky.Server(("127.0.0.1", args.port), handler)
    httpd.app = bsky.App(app_args)
    httpd.stream = Stream(args.ping_interval)
    return httpd


def main():
    args = arguments("Fake Jetstream and Bluesky service for feedsync's live mirror tests.").parse_args()
    httpd = http_server(args, Handler)
    print(f"listening on 127.0.0.1:{httpd.server_address[1]}", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
