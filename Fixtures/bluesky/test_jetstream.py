#!/usr/bin/env python3
"""Self-check for the fake Jetstream: python3 Fixtures/bluesky/test_jetstream.py

Its own minimal WebSocket client (RFC 6455), so the fixture is checked against the RFC and
Jetstream's README rather than against feedsync's client."""
import base64
import hashlib
import http.client
import json
import os
import socket
import struct
import subprocess
import sys
import time
import unittest

SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jetstream.py")
ADA, GRACE, LINUS = "did:plc:ada00000000000000000000", "did:plc:grace0000000000000000000", "did:plc:linus0000000000000000000"


class Client:
    """A blocking WebSocket client: masked frames, pongs to pings."""

    def __init__(self, port, target, headers=""):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{headers}\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        self.status = int(head.split(b" ")[1])
        if self.status == 101:
            accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
            assert b"Sec-WebSocket-Accept: " + accept in head, head
        self.pings = 0

    def exact(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed")
            data += chunk
        return data

    def send(self, opcode, payload):
        mask = os.urandom(4)
        n = len(payload)
        head = bytes([0x80 | opcode]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack("!H", n) if n < 65536
                                         else bytes([0x80 | 127]) + struct.pack("!Q", n))
        self.sock.sendall(head + mask + bytes(b ^ mask[i & 3] for i, b in enumerate(payload)))

    def frame(self):
        b0, b1 = self.exact(2)
        assert not b1 & 0x80, "a server frame must not be masked"
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self.exact(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self.exact(8))[0]
        return b0 & 0x0F, self.exact(n)

    def event(self):
        while True:
            opcode, payload = self.frame()
            if opcode == 0x9:
                self.pings += 1
                self.send(0xA, payload)
            elif opcode == 0x1:
                return json.loads(payload)
            else:
                return {"opcode": opcode, "payload": payload}

    def no_event(self, seconds=0.5):
        """The next data message within `seconds` (pings answered meanwhile), or None."""
        deadline = time.time() + seconds
        try:
            while time.time() < deadline:
                self.sock.settimeout(max(0.01, deadline - time.time()))
                opcode, payload = self.frame()
                if opcode == 0x9:
                    self.pings += 1
                    self.send(0xA, payload)
                else:
                    return json.loads(payload) if opcode == 0x1 else {"opcode": opcode, "payload": payload}
            return None
        except socket.timeout:
            return None
        finally:
            self.sock.settimeout(5)


class JetstreamTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.proc = subprocess.Popen([sys.executable, SERVER, "--port", "0", "--exit-on-stdin-eof", "--ping-interval", "0.3"],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        cls.port = int(cls.proc.stdout.readline().strip().rsplit(":", 1)[1])

    @classmethod
    def tearDownClass(cls):
        cls.proc.stdin.close()
        cls.proc.wait(5)

    def call(self, method, path, token=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        conn.request(method, path, headers={"Authorization": f"Bearer {token}"} if token else {})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())

    def token(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        conn.request("POST", "/xrpc/com.atproto.server.createSession", body=json.dumps({"identifier": "me.test", "password": "app-pass-word"}),
                     headers={"Content-Type": "application/json"})
        return json.loads(conn.getresponse().read())["accessJwt"]

    def test_filters_by_did_and_collection(self):
        ws = Client(self.port, f"/subscribe?wantedCollections=app.bsky.feed.post&wantedDids={ADA}")
        self.assertEqual(ws.status, 101)
        _, grace = self.call("POST", f"/_jetstream/post?did={GRACE}")
        _, ada = self.call("POST", f"/_jetstream/post?did={ADA}")
        event = ws.event()
        self.assertEqual((event["did"], event["kind"], event["commit"]["operation"], event["commit"]["collection"]),
                         (ADA, "commit", "create", "app.bsky.feed.post"))
        self.assertEqual(event["time_us"], ada["time_us"])
        self.assertEqual(f"at://{ADA}/app.bsky.feed.post/{event['commit']['rkey']}", ada["uri"])
        self.assertIn("text", event["commit"]["record"])
        # A repost by Ada is another collection: filtered out. Identity events pass any collection filter.
        self.call("POST", f"/_jetstream/repost?uri={grace['uri']}&by={ADA}")
        self.call("POST", f"/_jetstream/identity?did={ADA}&handle=ada2.bsky.social")
        event = ws.event()
        self.assertEqual((event["kind"], event["identity"]["handle"]), ("identity", "ada2.bsky.social"))

    def test_cursor_replays_then_goes_live(self):
        _, first = self.call("POST", f"/_jetstream/post?did={LINUS}")
        _, second = self.call("POST", f"/_jetstream/post?did={LINUS}")
        ws = Client(self.port, f"/subscribe?wantedDids={LINUS}&cursor={first['time_us']}")
        self.assertEqual([ws.event()["time_us"], ws.event()["time_us"]], [first["time_us"], second["time_us"]])
        _, third = self.call("POST", f"/_jetstream/post?did={LINUS}")
        self.assertEqual(ws.event()["time_us"], third["time_us"])
        # A cursor in the future is a live tail.
        live = Client(self.port, f"/subscribe?wantedDids={LINUS}&cursor={third['time_us'] + 10**12}")
        self.assertIsNone(live.no_event())

    def test_options_update_and_require_hello(self):
        ws = Client(self.port, "/subscribe?requireHello=true")
        self.call("POST", f"/_jetstream/post?did={GRACE}")
        self.assertIsNone(ws.no_event(), "nothing before the hello")
        ws.send(0x1, json.dumps({"type": "options_update", "payload": {"wantedCollections": ["app.bsky.feed.*"], "wantedDids": [GRACE]}}).encode())
        self.assertEqual(ws.event()["did"], GRACE)   # the post made while paused, then live
        ws.send(0x1, json.dumps({"type": "heartbeat", "payload": "hi"}).encode())
        self.assertEqual(ws.event(), {"kind": "heartbeat", "payload": "hi"})
        ws.send(0x1, b"not json")
        with self.assertRaises((ConnectionError, OSError)):
            while True:
                ws.event()

    def test_pings_and_close(self):
        ws = Client(self.port, f"/subscribe?wantedDids={LINUS}")
        deadline = time.time() + 5
        while ws.pings < 2 and time.time() < deadline:
            ws.no_event(0.4)
        self.assertGreaterEqual(ws.pings, 2)
        ws.send(0x8, struct.pack("!H", 1001))
        self.assertEqual(ws.event(), {"opcode": 0x8, "payload": struct.pack("!H", 1001)})
        _, stats = self.call("GET", "/_jetstream/stats")
        self.assertIn(1001, stats["close_codes"])
        self.assertGreater(stats["pongs"], 0)

    def test_drop_and_refuse(self):
        a, b = Client(self.port, f"/subscribe?wantedDids={LINUS}"), Client(self.port, f"/subscribe?wantedDids={GRACE}")
        self.call("POST", "/_jetstream/drop?refuse=1")
        for ws in (a, b):
            with self.assertRaises((ConnectionError, OSError)):
                while True:
                    ws.event()
        self.assertEqual(Client(self.port, "/subscribe").status, 503)
        time.sleep(1.1)
        self.assertEqual(Client(self.port, "/subscribe").status, 101)

    def test_limits_and_headers(self):
        # 10,000 DIDs do not fit in a request line (64 KiB here): they go in an options_update.
        many = [f"did:plc:x{i:020d}" for i in range(10_001)]
        self.assertEqual(Client(self.port, "/subscribe?" + "&".join("wantedDids=" + d for d in many)).status, 414)
        ws = Client(self.port, "/subscribe?requireHello=true")
        ws.send(0x1, json.dumps({"type": "options_update", "payload": {"wantedDids": many[:10_000]}}).encode())
        ws.send(0x1, json.dumps({"type": "heartbeat", "payload": "kept"}).encode())
        self.assertEqual(ws.event()["payload"], "kept")
        ws.send(0x1, json.dumps({"type": "options_update", "payload": {"wantedDids": many}}).encode())
        with self.assertRaises((ConnectionError, OSError)):
            while True:
                ws.event()
        Client(self.port, "/subscribe?wantedDids=did:plc:header", "X-Probe: yes\r\n")
        _, out = self.call("GET", "/_jetstream/subscriptions")
        last = [s for s in out["subscriptions"] if "headers" in s][-1]
        self.assertEqual(last["headers"].get("X-Probe"), "yes")

    def test_hydration_and_graph(self):
        token = self.token()
        _, post = self.call("POST", f"/_jetstream/post?did={ADA}")
        status, out = self.call("GET", f"/xrpc/app.bsky.feed.getPosts?uris={post['uri']}&uris=at://did:plc:none/app.bsky.feed.post/x", token)
        self.assertEqual((status, [p["uri"] for p in out["posts"]]), (200, [post["uri"]]))
        self.assertEqual(out["posts"][0]["author"]["did"], ADA)
        self.assertEqual(self.call("GET", "/xrpc/app.bsky.feed.getPosts?" + "&".join(["uris=u"] * 26), token)[0], 400)
        self.assertEqual(self.call("GET", f"/xrpc/app.bsky.feed.getPosts?uris={post['uri']}")[0], 401)
        for i in range(3):
            self.call("POST", f"/_jetstream/follow?did=did:plc:extra{i}")
        follows, cursor = [], ""
        while True:
            status, out = self.call("GET", f"/xrpc/app.bsky.graph.getFollows?actor=me.test&limit=4{cursor}", token)
            self.assertEqual(status, 200)
            follows += [p["did"] for p in out["follows"]]
            if "cursor" not in out:
                break
            cursor = "&cursor=" + out["cursor"]
        self.assertIn("did:plc:extra2", follows)
        self.assertEqual(len(follows), len(set(follows)))
        self.call("POST", "/_jetstream/follow?did=did:plc:extra2&on=0")
        _, out = self.call("GET", "/xrpc/app.bsky.graph.getFollows?actor=me.test&limit=100", token)
        self.assertNotIn("did:plc:extra2", [p["did"] for p in out["follows"]])
        status, out = self.call("GET", "/xrpc/app.bsky.graph.getList?list=at://did:plc:ownerowner0000000000000/app.bsky.graph.list/3kfriends0001",
                                token)
        self.assertEqual((status, [i["subject"]["did"] for i in out["items"]][:2]), (200, [ADA, GRACE]))

    def test_delete_of_post_and_repost(self):
        ws = Client(self.port, f"/subscribe?wantedDids={ADA}&wantedDids={GRACE}")
        _, post = self.call("POST", f"/_jetstream/post?did={GRACE}")
        _, repost = self.call("POST", f"/_jetstream/repost?uri={post['uri']}&by={ADA}")
        self.assertEqual(self.call("POST", f"/_jetstream/delete?uri={repost['uri']}")[0], 200)
        self.assertEqual(self.call("POST", f"/_jetstream/delete?uri={post['uri']}")[0], 200)
        kinds = [(e["did"], e["commit"]["operation"], e["commit"]["collection"]) for e in (ws.event() for _ in range(4))]
        self.assertEqual(kinds, [(GRACE, "create", "app.bsky.feed.post"), (ADA, "create", "app.bsky.feed.repost"),
                                 (ADA, "delete", "app.bsky.feed.repost"), (GRACE, "delete", "app.bsky.feed.post")])


if __name__ == "__main__":
    unittest.main()
