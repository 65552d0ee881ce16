#!/usr/bin/env python3
"""The Bluesky live mirror (Jetstream) against Fixtures/bluesky/jetstream.py.

    python3 Benchmarks/bench_live_bluesky.py               # builds the release feedsyncd, then both sides
    python3 Benchmarks/bench_live_bluesky.py --no-build    # use the existing .build/release/feedsyncd
    python3 Benchmarks/bench_live_bluesky.py --smoke       # 20 posts, 2 accounts, a short idle window

Sides:
  latency   one live home feed (interval 1 h, so only the stream can deliver): --posts posts
            published one by one through /_jetstream/post (a followed author); for each, the time
            from just before the publish request to the moment its row is in the SQLite file
            (polled every 1 ms from here): the Jetstream event, the getPosts hydration and the
            write. Median and p99; targets < 200 ms and < 1 s.
  idle      feedsyncd with 10 live feeds on each of --accounts accounts (one fixture process,
            and so one account, per account; home, the list and eight author: timelines: ten
            Jetstream connections each), interval 10 min: CPU % and RSS over --idle-seconds once
            every connection has caught up. Target: <= 1 % CPU.

Exit status 1 when something is broken (a post never arrived, the daemon died); a missed
target only shows as MISS. Standard library only; shares its process helpers with bench_live.py.
"""
import argparse
import http.client
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_live import TICK, Broken, Daemon, verdict, write_config  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "Fixtures" / "bluesky" / "jetstream.py"
AUTHORS = ["did:plc:ada00000000000000000000", "did:plc:grace0000000000000000000", "did:plc:linus0000000000000000000",
           "did:web:margaret.example.org", "did:plc:kenji0000000000000000000", "did:plc:noor00000000000000000000",
           "did:plc:mateo0000000000000000000", "did:plc:chiara000000000000000000"]
LIST = "at://did:plc:ownerowner0000000000000/app.bsky.graph.list/3kfriends0001"
TIMELINES = ["home", f"list:{LIST}"] + [f"author:{did}" for did in AUTHORS]


class Fixture:
    def __init__(self, posts):
        self.proc = subprocess.Popen([sys.executable, str(SERVER), "--port", "0", "--exit-on-stdin-eof", "--posts", str(posts)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline().strip().rsplit(":", 1)[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)

    def call(self, method, path):
        self.conn.request(method, path)
        response = self.conn.getresponse()
        body = response.read()
        if response.status != 200:
            raise Broken(f"{method} {path} answered {response.status}")
        return json.loads(body)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(10)


def feed(name, server, timeline, interval):
    return {"name": name, "interval": interval, "posts": {
        "integration": "bluesky", "service": server.url, "identifier": "me.test", "appPasswordEnv": "BLUESKY_APP_PASSWORD",
        "timeline": timeline, "stream": True, "jetstreamURL": f"ws://127.0.0.1:{server.port}/subscribe"}}


def latency(binary, posts):
    server = Fixture(40)
    try:
        with tempfile.TemporaryDirectory() as folder:
            daemon = Daemon(binary, write_config(folder, [feed("live", server, "home", "1h")]),
                            {"BLUESKY_APP_PASSWORD": "app-pass-word"}, folder)
            try:
                daemon.wait_for("live_caught_up", 1, 60)
                db = sqlite3.connect(Path(folder) / "feedsync.sqlite", timeout=30)
                samples = []
                for n in range(posts):
                    started = time.perf_counter()
                    uri = server.call("POST", f"/_jetstream/post?did={AUTHORS[n % len(AUTHORS)]}")["uri"]
                    deadline = started + 10
                    while db.execute("SELECT 1 FROM posts WHERE feed = 'live' AND id = ?", (uri,)).fetchone() is None:
                        if time.perf_counter() > deadline:
                            raise Broken(f"post {uri} did not arrive within 10 s:\n{daemon.tail()}")
                        time.sleep(0.001)
                    samples.append(time.perf_counter() - started)
                requests = server.call("GET", "/_control/stats")["requests"]
            finally:
                daemon.stop()
    finally:
        server.stop()
    samples.sort()
    median = statistics.median(samples) * 1000
    p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))] * 1000
    polls = sum(requests.get("GET app.bsky.feed.getTimeline", {}).values())
    hydrations = sum(requests.get("GET app.bsky.feed.getPosts", {}).values())
    print(f"latency: {len(samples)} posts published one by one: median {median:.1f} ms ({verdict(median < 200)}, target < 200), "
          f"p99 {p99:.1f} ms ({verdict(p99 < 1000)}, target < 1000), max {samples[-1] * 1000:.1f} ms; "
          f"getPosts calls {hydrations}, timeline polls in all {polls} (the catch-up)")


def idle(binary, accounts, seconds):
    servers = [Fixture(100) for _ in range(accounts)]
    try:
        with tempfile.TemporaryDirectory() as folder:
            feeds = [feed(f"a{k}-{i}", server, timeline, "10m") for k, server in enumerate(servers) for i, timeline in enumerate(TIMELINES)]
            daemon = Daemon(binary, write_config(folder, feeds), {"BLUESKY_APP_PASSWORD": "app-pass-word"}, folder)
            try:
                daemon.wait_for("sync_done", len(feeds), 300)
                daemon.wait_for("live_caught_up", len(feeds), 300)
                time.sleep(2)
                before, rss_before = daemon.cpu_ticks(), daemon.rss_mib()
                time.sleep(seconds)
                cpu = (daemon.cpu_ticks() - before) / TICK / seconds * 100
                rss = max(rss_before, daemon.rss_mib())
                opened = sum(s.call("GET", "/_jetstream/stats")["open"] for s in servers)
            finally:
                daemon.stop()
    finally:
        for server in servers:
            server.stop()
    print(f"idle: {len(feeds)} live feeds on {accounts} accounts, {opened} open Jetstream connections: "
          f"CPU {cpu:.2f} % over {seconds:.0f} s ({verdict(cpu <= 1)}, target <= 1 %), RSS {rss:.1f} MiB")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--no-build", action="store_true")
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--posts", type=int, default=200)
    p.add_argument("--accounts", type=int, default=5)
    p.add_argument("--idle-seconds", type=float, default=30)
    args = p.parse_args()
    if args.smoke:
        args.posts, args.accounts, args.idle_seconds = 20, 2, 5
    if not args.no_build:
        subprocess.run(["swift", "build", "-c", "release", "--product", "feedsyncd"], cwd=ROOT, check=True)
    binary = ROOT / ".build" / "release" / "feedsyncd"
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    print(f"build: {commit}, release feedsyncd, {os.cpu_count()} cores")
    try:
        latency(binary, args.posts)
        idle(binary, args.accounts, args.idle_seconds)
    except Broken as error:
        print(f"broken: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
