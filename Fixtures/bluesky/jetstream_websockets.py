#!/usr/bin/env python3
"""Jetstream's WebSocket side on a third-party RFC 6455 implementation: the `websockets` library
(Debian's python3-websockets, 10.4), so feedsync's client is checked against framing no one here wrote.

Jetstream's documented behaviour, as in jetstream.py: `GET /subscribe` sends one JSON event per
text message, filtered by `wantedCollections` and `wantedDids`, replayed from `cursor` (unix µs)
then live, updated by `options_update` messages (`requireHello=true` waits for the first). The
library does the handshake, the framing, the close handshake and the pings (`--ping-interval`,
`--ping-timeout`: a client that does not answer is closed with 1011); `--fragment N` has it send
every event as a fragmented message, N characters a frame.

The event log, the filters and the HTTP side are jetstream.py's: `--port` serves server.py's XRPC
(hydration) and the `/_jetstream/...` control endpoints (post, delete, drop, subscriptions,
stats); `--ws-port` serves `/subscribe` through the library, and `GET /_jetstream/websocket` on the
HTTP port says where. A drop closes every connection with 1001.
"""
import asyncio
from http import HTTPStatus
import os
import sys
import threading
import time
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jetstream  # noqa: E402
import server as bsky  # noqa: E402
from websockets.exceptions import ConnectionClosed  # noqa: E402
from websockets.legacy.server import WebSocketServerProtocol, serve  # noqa: E402


class Handler(jetstream.Handler):
    """jetstream.py's HTTP side, which also says where the library's WebSocket listens."""

    def do_GET(self):
        if urlsplit(self.path).path == "/_jetstream/websocket":
            return self._send(200, [], bsky.encode({"url": f"ws://127.0.0.1:{self.server.ws_port}/subscribe"}))
        return super().do_GET()

    do_POST = do_GET


class Protocol(WebSocketServerProtocol):
    """The library's connection, counting the pongs that answer its own pings (the keepalive's among them)."""

    async def ping(self, data=None):
        waiter = await super().ping(data)
        stream = self.ws_server.stream

        def answered(future):
            if not future.cancelled() and future.exception() is None:
                with stream.cond:
                    stream.stats["pongs"] += 1
        waiter.add_done_callback(answered)
        return waiter


class Subscriptions:
    """Serves /subscribe from jetstream.py's Stream, woken by a thread that watches it."""

    def __init__(self, stream, fragment):
        self.stream, self.fragment, self.wake = stream, fragment, None

    def watch(self, loop):
        """Wakes every subscriber when the log grows or a drop happens."""
        async def notify():
            async with self.wake:
                self.wake.notify_all()
        with self.stream.cond:
            while True:
                seen = (len(self.stream.events), self.stream.generation)
                while seen == (len(self.stream.events), self.stream.generation):
                    self.stream.cond.wait()
                asyncio.run_coroutine_threadsafe(notify(), loop)

    async def process_request(self, path, headers):
        """Records every subscribe request (path and headers); refuses during a drop's refusal, and any other path."""
        stream = self.stream
        with stream.cond:
            if urlsplit(path).path != "/subscribe":
                return HTTPStatus.NOT_FOUND, [], b"Not found\n"
            stream.subscriptions.append({"path": path, "headers": dict(headers.raw_items()), "at": time.time()})
            if time.time() < stream.refuse_until:
                return HTTPStatus.SERVICE_UNAVAILABLE, [], bsky.xrpc_error("Unavailable", "Refusing connections")
        state, cursor = jetstream.subscription(parse_qs(urlsplit(path).query))
        if state is None:
            return HTTPStatus.BAD_REQUEST, [], bsky.xrpc_error("BadRequest", "Too many wantedDids or wantedCollections")
        return None

    async def serve(self, ws, path):
        stream = self.stream
        state, cursor = jetstream.subscription(parse_qs(urlsplit(path).query))
        with stream.cond:
            stream.stats["connections"] += 1
            stream.stats["open"] += 1
            generation, position = stream.generation, stream.start(cursor)
        reader = asyncio.create_task(self.read(ws, state))
        try:
            while True:
                async with self.wake:
                    await self.wake.wait_for(lambda: stream.generation != generation or not state["open"]
                                             or (state["hello"] and position < len(stream.events)))
                with stream.cond:
                    if stream.generation != generation or not state["open"]:
                        break
                    batch = stream.events[position:]
                    position += len(batch)
                    current = state["filter"]
                for _, event, data, everyone in batch:
                    if everyone or current.wants(event, len(data)):
                        text, n = data.decode(), self.fragment
                        await ws.send([text[i:i + n] for i in range(0, len(text), n)] if n else text)
        except ConnectionClosed:
            pass
        finally:
            reader.cancel()
            await ws.close(1001, "dropped")
            with stream.cond:
                stream.stats["open"] -= 1
                stream.stats["close_codes"].append(ws.close_code)

    async def read(self, ws, state):
        """Client messages: options_update and heartbeat (jetstream.py's rules); anything invalid disconnects."""
        try:
            async for message in ws:
                reply = jetstream.subscriber_message(message, state, self.stream)
                if reply is None:
                    return
                if reply:
                    await ws.send(reply.decode())
                async with self.wake:
                    self.wake.notify_all()
        except ConnectionClosed:
            pass
        finally:
            state["open"] = False
            async with self.wake:
                self.wake.notify_all()


async def run(args, httpd):
    subscriptions = Subscriptions(httpd.stream, args.fragment)
    subscriptions.wake = asyncio.Condition()
    threading.Thread(target=subscriptions.watch, args=(asyncio.get_running_loop(),), daemon=True).start()
    ping_interval = args.ping_interval or None
    async with serve(subscriptions.serve, "127.0.0.1", args.ws_port, create_protocol=Protocol, compression=None,
                     process_request=subscriptions.process_request, ping_interval=ping_interval,
                     ping_timeout=args.ping_timeout, close_timeout=2) as ws_server:
        ws_server.stream = httpd.stream
        httpd.ws_port = ws_server.sockets[0].getsockname()[1]
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        print(f"listening on 127.0.0.1:{httpd.server_address[1]}", flush=True)
        await asyncio.Future()


def main():
    p = jetstream.arguments("Jetstream's WebSocket side on the websockets library, beside the fake Bluesky service.")
    p.add_argument("--ws-port", type=int, default=0, help="TCP port of /subscribe on 127.0.0.1; 0 picks a free one")
    p.add_argument("--ping-timeout", type=float, default=20, help="seconds a ping waits for its pong before closing with 1011")
    p.add_argument("--fragment", type=int, default=0, help="send each event in text and continuation frames of this many characters")
    args = p.parse_args()
    asyncio.run(run(args, jetstream.http_server(args, Handler)))


if __name__ == "__main__":
    main()
