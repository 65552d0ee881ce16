#!/usr/bin/env python3
"""feedsyncd's metrics listener under load: how long `/metrics` takes with many feeds, and what
scraping every second costs an idle daemon.

1. Starts Fixtures/webfeed/server.py with N feeds of 5 items on 20 loopback ports, and feedsyncd
   on an OPML of all of them with `"metrics": {"listen": "127.0.0.1:PORT"}`.
2. Waits until every feed has synced once (N `sync_done` lines) and the store's figures reached
   the registry, then times 50 scrapes of `/metrics` (median and worst, bytes per scrape).
3. Measures the daemon's CPU over the same idle window twice, alternating: without scrapes,
   and with one scrape a second, and reports the difference as a share of one core.

Targets (issue 24): `/metrics` with 10,000 feeds answers in < 100 ms; scraping every second adds
< 1% CPU to an idle daemon.

Usage: python3 Benchmarks/bench_metrics.py [--feeds 10000] [--idle 30] [--no-build] [--smoke]
"""
import argparse
import http.client
import json
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchkit import ROOT, TICK, Broken, Daemon, FeedServer, build_release, cpu_ticks, run_script  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port):
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/metrics")
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    if resp.status != 200:
        raise Broken(f"/metrics answered {resp.status}")
    return time.perf_counter() - started, body


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--feeds", type=int, default=10000)
    p.add_argument("--idle", type=float, default=30.0, help="seconds per idle window (default 30)")
    p.add_argument("--no-build", action="store_true")
    p.add_argument("--smoke", action="store_true", help="200 feeds, 3 s windows, debug build if no release build")
    args = p.parse_args()
    if args.smoke:
        args.feeds, args.idle = 200, 3.0
    if not args.no_build and not args.smoke:
        build_release()
    release = ROOT / ".build/release/feedsyncd"
    binary = release if release.exists() or not args.smoke else ROOT / ".build/debug/feedsyncd"

    server = FeedServer(args.feeds, 5, 20)
    folder = Path(tempfile.mkdtemp(prefix="feedsync-bench-metrics-"))
    port = free_port()
    (folder / "subscriptions.opml").write_bytes(server.call("GET", "/opml?ports=1"))
    config = folder / "feedsync.json"
    config.write_text(json.dumps({
        "store": {"integration": "sqlite", "path": "feeds.sqlite"},
        "daemon": {"concurrency": 8, "maxRequestsPerHost": 1},
        "metrics": {"listen": f"127.0.0.1:{port}"},
        "feeds": [{"name": "blogs", "opml": "subscriptions.opml", "interval": "1h"}]}))
    daemon = Daemon(binary, config)
    try:
        synced = daemon.wait_for("sync_done", args.feeds, timeout=600)
        print(f"feeds synced: {args.feeds:,} in {synced:.1f} s", file=sys.stderr)
        deadline = time.time() + 30
        while True:
            _, body = scrape(port)
            if body.count(b"feedsync_posts{") >= args.feeds or time.time() > deadline:
                break
            time.sleep(1)
        times, size = [], 0
        for _ in range(50):
            took, body = scrape(port)
            times.append(took)
            size = len(body)
        median, worst = statistics.median(times), max(times)

        def window(scraping):
            before = cpu_ticks(daemon.proc.pid)
            end = time.perf_counter() + args.idle
            while time.perf_counter() < end:
                if scraping:
                    scrape(port)
                time.sleep(1)
            return (cpu_ticks(daemon.proc.pid) - before) / TICK

        quiet1, busy1, quiet2, busy2 = window(False), window(True), window(False), window(True)
        added = ((busy1 + busy2) - (quiet1 + quiet2)) / (2 * args.idle) * 100
        load = os.getloadavg()[0]
        print(f"metrics side, {binary.relative_to(ROOT)}, {args.feeds:,} feeds, load {load:.1f}")
        print(f"  /metrics: median {median * 1000:.1f} ms, worst {worst * 1000:.1f} ms of 50, {size / 1e6:.2f} MB "
              f"[{'ok' if median < 0.1 else 'MISS'}: target < 100 ms]")
        print(f"  idle CPU over {args.idle:.0f} s windows: quiet {quiet1:.2f}/{quiet2:.2f} s, scraped every second "
              f"{busy1:.2f}/{busy2:.2f} s -> {added:+.2f}% of a core [{'ok' if added < 1 else 'MISS'}: target < 1%]")
    finally:
        daemon.stop()
        server.stop()


if __name__ == "__main__":
    run_script(main, "bench_metrics")
