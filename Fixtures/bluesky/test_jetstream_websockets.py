#!/usr/bin/env python3
"""Self-check for jetstream_websockets.py: python3 Fixtures/bluesky/test_jetstream_websockets.py

Its client is the websockets library's own; without the library (python3-websockets) it skips."""
import asyncio
import json
import os
import subprocess
import sys
import unittest
import urllib.request

try:
    from websockets.exceptions import ConnectionClosed
    from websockets.legacy.client import connect
except ImportError:
    connect = None

SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jetstream_websockets.py")
ADA, GRACE = "did:plc:ada00000000000000000000", "did:plc:grace0000000000000000000"


@unittest.skipIf(connect is None, "no websockets library in this python3 (apt-get install python3-websockets)")
class JetstreamWebSocketsTests(unittest.TestCase):
    def setUp(self):
        self.server = subprocess.Popen([sys.executable, SERVER, "--port", "0", "--exit-on-stdin-eof", "--ping-interval", "0.2",
                                        "--fragment", "30"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.port = int(self.server.stdout.readline().split(b":")[-1])
        self.url = self.control("GET", "/_jetstream/websocket")["url"]

    def tearDown(self):
        self.server.stdin.close()
        self.server.stdout.close()
        self.server.wait(5)

    def control(self, method, path):
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", method=method)
        with urllib.request.urlopen(request) as answer:
            return json.load(answer)

    def test_filters_options_update_replay_drop_and_refusal(self):
        async def check():
            async with connect(f"{self.url}?wantedCollections=app.bsky.feed.post&wantedDids={ADA}") as ws:
                uri = self.control("POST", f"/_jetstream/post?did={ADA}")["uri"]
                self.control("POST", f"/_jetstream/post?did={GRACE}")
                event = json.loads(await asyncio.wait_for(ws.recv(), 2))
                self.assertEqual((event["did"], event["commit"]["operation"]), (ADA, "create"))
                await ws.send(json.dumps({"type": "options_update", "payload": {"wantedDids": [GRACE]}}))
                await asyncio.sleep(0.3)
                self.control("POST", f"/_jetstream/post?did={GRACE}")
                self.assertEqual(json.loads(await asyncio.wait_for(ws.recv(), 2))["did"], GRACE)
                self.control("POST", "/_jetstream/drop?refuse=5")
                with self.assertRaises(ConnectionClosed):
                    await asyncio.wait_for(ws.recv(), 2)
                self.assertEqual(ws.close_code, 1001)
            with self.assertRaisesRegex(Exception, "503"):
                async with connect(self.url):
                    pass
            return uri
        uri = asyncio.run(check())
        stats = self.control("GET", "/_jetstream/stats")
        self.assertGreaterEqual(stats["pongs"], 1)
        self.assertEqual((stats["connections"], stats["options_updates"]), (1, 1))
        paths = [s["path"] for s in self.control("GET", "/_jetstream/subscriptions")["subscriptions"] if "path" in s]
        self.assertEqual(len(paths), 2)
        self.assertTrue(uri.startswith(f"at://{ADA}/"))

    def test_cursor_replays_then_goes_live(self):
        async def check():
            first = self.control("POST", f"/_jetstream/post?did={ADA}")
            self.control("POST", f"/_jetstream/post?did={ADA}")
            async with connect(f"{self.url}?wantedDids={ADA}&cursor={first['time_us']}") as ws:
                times = [json.loads(await asyncio.wait_for(ws.recv(), 2))["time_us"] for _ in range(2)]
                self.assertEqual(times[0], first["time_us"])
                live = self.control("POST", f"/_jetstream/post?did={ADA}")
                self.assertEqual(json.loads(await asyncio.wait_for(ws.recv(), 2))["time_us"], live["time_us"])
        asyncio.run(check())


if __name__ == "__main__":
    unittest.main()
