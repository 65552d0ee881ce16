#!/usr/bin/env python3
"""A misbehaving text/event-stream server for the SSE client's tests. Standard library only.

    python3 Fixtures/sse/server.py --port 0 --exit-on-stdin-eof

The first line on stdout is `listening on 127.0.0.1:PORT`. The path chooses the behaviour:
  /silent          accept the connection, never send a byte
  /quiet           200 text/event-stream headers, then nothing
  /events?n=N      N events `event: n` / `data: <i>` in one burst, then end the answer
  /flood           events as fast as the socket takes them, for ever
  /big             one event whose data line is 2 MiB
  /comments        comment lines for ever
  /fields?kind=K[&every=S]
                   lines that dispatch nothing for ever, as fast as the socket takes them (or one
                   every S seconds): K is event, id, retry, unknown, nocolon, blank or mixed
  /garbage         chunked, one good event, then a chunk header that is not hex
  /json            200 application/json
  /unauthorized    401 {"error": "The access token is invalid"}
  /redirect        302 to http://localhost:<same port>/events (another origin)
"""
import argparse
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


def chunk(data):
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def head(self, status="200 OK", kind="text/event-stream"):
        self.wfile.write(f"HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nTransfer-Encoding: chunked\r\n"
                         "Connection: close\r\n\r\n".encode())

    def do_GET(self):
        url = urlsplit(self.path)
        params = parse_qs(url.query)
        try:
            if url.path == "/silent":
                time.sleep(3600)
            elif url.path == "/quiet":
                self.head()
                self.wfile.flush()
                time.sleep(3600)
            elif url.path == "/events":
                self.head()
                n = int(params.get("n", ["1"])[0])
                body = b"".join(f"event: n\ndata: {i}\n\n".encode() for i in range(n))
                self.wfile.write(chunk(body) + b"0\r\n\r\n")
            elif url.path == "/flood":
                self.head()
                batch = chunk(b"".join(f"event: n\ndata: {i}\n\n".encode() for i in range(1000)))
                while True:
                    self.wfile.write(batch)
            elif url.path == "/big":
                self.head()
                self.wfile.write(chunk(b"data: " + b"x" * (2 << 20) + b"\n\n") + b"0\r\n\r\n")
            elif url.path == "/comments":
                self.head()
                line = chunk(b":" + b"c" * 1000 + b"\n")
                while True:
                    self.wfile.write(line)
            elif url.path == "/fields":
                self.head()
                lines = {"event": b"event: update\n", "id": b"id: 42\n", "retry": b"retry: 1000\n",
                         "unknown": b"foo: bar\n", "nocolon": b"data2\n", "blank": b"\n",
                         "mixed": b"event: a\nid: 1\nretry: 5\nfoo: bar\nevent\n\n\r\n"}[params.get("kind", ["event"])[0]]
                every = float(params.get("every", ["0"])[0])
                batch = chunk(lines * (1 if every else 200))
                while True:
                    self.wfile.write(batch)
                    if every:
                        self.wfile.flush()
                        time.sleep(every)
            elif url.path == "/garbage":
                self.head()
                self.wfile.write(chunk(b"data: good\n\n") + b"zz\r\nnot a chunk\r\n")
                self.wfile.flush()
                time.sleep(2)
            elif url.path == "/json":
                self.head(kind="application/json")
                self.wfile.write(chunk(b"[]") + b"0\r\n\r\n")
            elif url.path == "/redirect":
                port = self.server.server_address[1]
                self.wfile.write(f"HTTP/1.1 302 Found\r\nLocation: http://localhost:{port}/events\r\n"
                                 "Content-Length: 0\r\nConnection: close\r\n\r\n".encode())
            elif url.path == "/unauthorized":
                body = b'{"error": "The access token is invalid"}'
                self.wfile.write(b"HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n"
                                 + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass
        self.close_connection = True


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--exit-on-stdin-eof", action="store_true")
    args = p.parse_args()
    if args.exit_on_stdin_eof:
        def watch():
            while sys.stdin.buffer.read(4096):
                pass
            os._exit(0)
        threading.Thread(target=watch, daemon=True).start()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
