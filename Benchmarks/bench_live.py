#!/usr/bin/env python3
"""The live mirror (Mastodon streaming API) against Fixtures/mastodon/server.py.

    python3 Benchmarks/bench_live.py               # builds the release feedsyncd, then both sides
    python3 Benchmarks/bench_live.py --no-build    # use the existing .build/release/feedsyncd
    python3 Benchmarks/bench_live.py --smoke       # 20 statuses, 2 accounts, a short idle window

Sides:
  latency   one streaming feed (interval 1 h, so only the stream can deliver): --statuses statuses
            published one by one through /_control/post; for each, the time from just before
            the publish request to the moment its row is in the SQLite file (polled every 1 ms
            from here). Median and p99; targets < 200 ms and < 1 s.
  idle      feedsyncd with 10 feeds on each of --accounts accounts (one fixture server, token and
            port per account; home, list:1 and eight hashtags: ten streams each), once with
            "stream": true and once polling only (interval 10 min either way, so no poll falls in
            the window): CPU % and RSS over --idle-seconds once every stream has caught up.
            Targets: <= 1 % CPU, RSS under the polling figure + 20 MiB.

Exit status 1 when something is broken (a status never arrived, the daemon died); a missed
target only shows as MISS. Standard library only.
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

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
SERVER = ROOT / "Fixtures" / "mastodon" / "server.py"
TICK = os.sysconf("SC_CLK_TCK")
TIMELINES = ["home", "list:1", "hashtag:swift", "hashtag:sqlite", "hashtag:ios", "hashtag:fediverse",
             "hashtag:opensource", "hashtag:photography", "hashtag:mastodev", "hashtag:buildinpublic"]


class Broken(Exception):
    pass


class Fixture:
    def __init__(self, token, statuses):
        self.proc = subprocess.Popen([sys.executable, str(SERVER), "--port", "0", "--exit-on-stdin-eof", "--token", token,
                                      "--statuses", str(statuses), "--rate-limit", "100000"],
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


class Daemon:
    def __init__(self, binary, config, env, folder):
        self.log_path = Path(folder) / f"feedsyncd-{time.time_ns()}.log"
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen([str(binary), "--config", str(config)], stdout=subprocess.DEVNULL, stderr=self.log,
                                     env={**os.environ, **env}, cwd=folder)

    def count(self, event):
        return self.log_path.read_text(errors="replace").count(f"event={event}")

    def wait_for(self, event, count, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise Broken(f"feedsyncd exited ({self.proc.returncode}):\n{self.tail()}")
            if self.count(event) >= count:
                return
            time.sleep(0.1)
        raise Broken(f"no {count} × {event} within {timeout} s:\n{self.tail()}")

    def tail(self):
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-15:])

    def cpu_ticks(self):
        stat = Path(f"/proc/{self.proc.pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2:].split()
        return int(fields[11]) + int(fields[12])

    def rss_mib(self):
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return -1

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(30)
        self.log.close()


def write_config(folder, feeds):
    config = Path(folder) / "feedsync.json"
    config.write_text(json.dumps({"store": {"integration": "sqlite", "path": "feedsync.sqlite"}, "feeds": feeds}))
    return config


def verdict(ok):
    return "ok" if ok else "MISS"


def latency(binary, statuses):
    server = Fixture("tok-0", 40)
    try:
        with tempfile.TemporaryDirectory() as folder:
            config = write_config(folder, [{"name": "live", "interval": "1h", "posts": {
                "integration": "mastodon", "server": server.url, "accessTokenEnv": "MASTODON_TOKEN",
                "timeline": "home", "stream": True}}])
            daemon = Daemon(binary, config, {"MASTODON_TOKEN": "tok-0"}, folder)
            try:
                daemon.wait_for("live_caught_up", 1, 60)
                db = sqlite3.connect(Path(folder) / "feedsync.sqlite", timeout=30)
                samples = []
                for _ in range(statuses):
                    started = time.perf_counter()
                    sid = server.call("POST", "/_control/post?count=1")["ids"][0]
                    deadline = started + 10
                    while db.execute("SELECT 1 FROM posts WHERE feed = 'live' AND id = ?", (sid,)).fetchone() is None:
                        if time.perf_counter() > deadline:
                            raise Broken(f"status {sid} did not arrive within 10 s:\n{daemon.tail()}")
                        time.sleep(0.001)
                    samples.append(time.perf_counter() - started)
                polls = server.call("GET", "/_control/stats")["requests"].get("GET /api/v1/timelines/home", {})
            finally:
                daemon.stop()
    finally:
        server.stop()
    samples.sort()
    median = statistics.median(samples) * 1000
    p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))] * 1000
    print(f"latency: {len(samples)} statuses published one by one: median {median:.1f} ms ({verdict(median < 200)}, target < 200), "
          f"p99 {p99:.1f} ms ({verdict(p99 < 1000)}, target < 1000), max {samples[-1] * 1000:.1f} ms; "
          f"timeline polls in all: {sum(polls.values())} (the catch-up)")


def idle(binary, accounts, seconds):
    servers = [Fixture(f"tok-{k}", 100) for k in range(accounts)]
    figures = {}
    try:
        for streaming in (False, True):
            with tempfile.TemporaryDirectory() as folder:
                feeds, env = [], {}
                for k, server in enumerate(servers):
                    env[f"TOKEN_{k}"] = f"tok-{k}"
                    for timeline in TIMELINES:
                        feeds.append({"name": f"a{k}-{timeline.replace(':', '-')}", "interval": "10m", "posts": {
                            "integration": "mastodon", "server": server.url, "accessTokenEnv": f"TOKEN_{k}",
                            "timeline": timeline, "stream": streaming}})
                daemon = Daemon(binary, write_config(folder, feeds), env, folder)
                try:
                    daemon.wait_for("sync_done", len(feeds), 300)
                    if streaming:
                        daemon.wait_for("live_caught_up", len(feeds), 300)
                    time.sleep(2)
                    before, rss_before = daemon.cpu_ticks(), daemon.rss_mib()
                    time.sleep(seconds)
                    cpu = (daemon.cpu_ticks() - before) / TICK / seconds * 100
                    figures[streaming] = (cpu, max(rss_before, daemon.rss_mib()))
                    opened = sum(s.call("GET", "/_control/streams")["open"] for s in servers)
                finally:
                    daemon.stop()
                side = "streaming" if streaming else "polling  "
                print(f"idle {side}: {len(feeds)} feeds on {accounts} accounts, {opened} open streams: "
                      f"CPU {figures[streaming][0]:.2f} % over {seconds:.0f} s, RSS {figures[streaming][1]:.1f} MiB")
    finally:
        for server in servers:
            server.stop()
    cpu, rss = figures[True]
    print(f"idle verdict: CPU {cpu:.2f} % ({verdict(cpu <= 1)}, target <= 1 %); RSS {rss:.1f} MiB vs polling "
          f"{figures[False][1]:.1f} MiB + 20 ({verdict(rss < figures[False][1] + 20)})")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--no-build", action="store_true")
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--statuses", type=int, default=200)
    p.add_argument("--accounts", type=int, default=10)
    p.add_argument("--idle-seconds", type=float, default=30)
    args = p.parse_args()
    if args.smoke:
        args.statuses, args.accounts, args.idle_seconds = 20, 2, 5
    if not args.no_build:
        subprocess.run(["swift", "build", "-c", "release", "--product", "feedsyncd"], cwd=ROOT, check=True)
    binary = ROOT / ".build" / "release" / "feedsyncd"
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    print(f"build: {commit}, release feedsyncd, {os.cpu_count()} cores")
    try:
        latency(binary, args.statuses)
        idle(binary, args.accounts, args.idle_seconds)
    except Broken as error:
        print(f"broken: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
