#!/usr/bin/env python3
"""A webhook receiver for feedsync's tests: checks each delivery's signature. Standard library only.

    python3 Fixtures/webhooks/receiver.py --port 0 --secret SECRET [--delay SECONDS] [--exit-on-stdin-eof]

The first line on stdout is "listening on 127.0.0.1:PORT".

  POST <any path>            a delivery: 503 while down; otherwise its X-Feedsync-Signature is
                             checked (sha256=HMAC-SHA256(secret, timestamp + "." + body)) and it
                             is recorded, valid or not, and answered 200 (401 when not valid),
                             after --delay seconds (a slow endpoint, for the benchmark)
  GET  /_control/received    {"deliveries": [{"id", "header_id", "event", "feed", "posts": [ids], "ids": [ids], "valid"}]}
  POST /_control/down        answer every delivery 503 from now on
  POST /_control/up          accept deliveries again
"""
import argparse
import hashlib
import hmac
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--exit-on-stdin-eof", action="store_true")
    args = parser.parse_args()
    lock = threading.Lock()
    state = {"down": False, "deliveries": []}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def answer(self, status, body=b"{}"):
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/_control/received":
                with lock:
                    return self.answer(200, json.dumps({"deliveries": state["deliveries"]}).encode())
            self.answer(404)

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path in ("/_control/down", "/_control/up"):
                with lock:
                    state["down"] = self.path.endswith("down")
                return self.answer(200)
            with lock:
                if state["down"]:
                    return self.answer(503, b"down")
            timestamp = self.headers.get("X-Feedsync-Timestamp", "")
            expected = "sha256=" + hmac.new(args.secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
            valid = hmac.compare_digest(expected, self.headers.get("X-Feedsync-Signature", ""))
            try:
                payload = json.loads(body)
            except ValueError:
                payload = {}
            record = {"id": payload.get("id"), "header_id": self.headers.get("X-Feedsync-Delivery"), "event": payload.get("event"),
                      "feed": payload.get("feed"), "posts": [p.get("id") for p in payload.get("posts", [])],
                      "ids": payload.get("ids", []), "valid": valid}
            with lock:
                state["deliveries"].append(record)
            if args.delay > 0:
                time.sleep(args.delay)
            self.answer(200 if valid else 401)

    ThreadingHTTPServer.daemon_threads = True
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    if args.exit_on_stdin_eof:
        sys.stdin.read()
        return
    threading.Event().wait()


if __name__ == "__main__":
    main()
