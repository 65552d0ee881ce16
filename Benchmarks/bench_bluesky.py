#!/usr/bin/env python3
"""The Bluesky side of the benchmark: a cold sync of the fake Bluesky service's home timeline
(Fixtures/bluesky/server.py, 20,000 entries by default, pages of 100, the API's maximum) next to
the download and json.loads ceilings over the same pages.

    python3 Benchmarks/bench_bluesky.py                # 20,000 posts, builds the release binary
    python3 Benchmarks/bench_bluesky.py --no-build     # use the existing .build/release/feedsync
    python3 Benchmarks/bench_bluesky.py --profile      # also split one more cold sync's CPU (needs perf)
    python3 Benchmarks/bench.py --bluesky              # the same, after the main benchmark

Target (issue 40): feedsync's cold sync reaches at least 80% of the json.loads ceiling (posts per
second). Beside them, SQLite's own floor: the same rows written into the same schema by
sqlite_floor.c, in transactions as large as feedsync's store makes, no network and no JSON (skipped without a C compiler).
Exit status 1 when something is broken (a command failed, the row count is wrong); a missed
target only shows as MISS. Standard library only.
"""
import argparse
import http.client
import shutil
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

import ceilings
import cpu_split
import benchkit
from benchkit import ROOT, Broken, RefServer, answer, build_release, checked, load_average, measure, run_script

SERVER = ROOT / "Fixtures/bluesky/server.py"
PASSWORD = "bench-app-password"
TARGET = ceilings.TARGETS["Bluesky"]
# Pages end in  ],"cursor":"<c>"}  when more follow; the tail finds it without decoding the feed.
TAIL = re.compile(rb'"cursor":"([^"]*)"\}\s*$')


def note(message):
    print(f"bench-bluesky: {message}", file=sys.stderr, flush=True)


def fake_bluesky(posts):
    """The fake Bluesky service as a child that dies with us."""
    # A quota no walk reaches: the benchmark measures reading and storing, not waiting.
    return RefServer(posts, None, [sys.executable, str(SERVER), "--port", "0", "--exit-on-stdin-eof", "--posts", str(posts),
                                   "--password", PASSWORD, "--rate-limit", "100000000"])


def ceiling(port, limit, parse):
    """(seconds, pages, bytes) of one walk: log in, then every page of the home timeline."""
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    _, body = answer(conn, "POST", "/xrpc/com.atproto.server.createSession", {"Content-Type": "application/json"},
                     json.dumps({"identifier": "me.test", "password": PASSWORD}))
    headers = {"Authorization": "Bearer " + json.loads(body)["accessJwt"]}
    cursor, pages, total, items = None, 0, 0, 0
    while True:
        _, body = answer(conn, "GET", f"/xrpc/app.bsky.feed.getTimeline?limit={limit}" + (f"&cursor={quote(cursor)}" if cursor else ""),
                         headers)
        pages, total = pages + 1, total + len(body)
        if parse:
            page = json.loads(body)
            items += len(page["feed"])
            cursor = page.get("cursor")
        else:
            match = TAIL.search(body[-512:])
            cursor = match.group(1).decode() if match else None
        if not cursor:
            break
    conn.close()
    return time.perf_counter() - started, pages, total


def pull_folder(port, limit, scratch):
    """A new folder with a config that pulls the fake service's home timeline into bench.sqlite there."""
    folder = Path(tempfile.mkdtemp(dir=scratch))
    (folder / "feedsync.json").write_text(json.dumps({"store": {"integration": "sqlite", "path": "bench.sqlite"}, "feeds": [
        {"name": "sky", "posts": {"integration": "bluesky", "service": f"http://127.0.0.1:{port}", "identifier": "me.test",
                                  "appPasswordEnv": "BLUESKY_APP_PASSWORD", "timeline": "home", "pageSize": limit}}]}))
    return folder


def check_count(folder, posts):
    with benchkit.connect(folder / "bench.sqlite") as db:
        count = db.execute("SELECT COUNT(*) FROM posts").fetchone()[0]
    if count != posts:
        raise Broken(f"the database holds {count} posts, not {posts}")


def cold_sync(binary, port, limit, scratch, posts):
    folder = pull_folder(port, limit, scratch)
    env = dict(os.environ, BLUESKY_APP_PASSWORD=PASSWORD)
    done = checked(measure([binary, "pull", "--config", folder / "feedsync.json"], env=env, cwd=folder), "feedsync pull")
    check_count(folder, posts)
    return done.wall, done.cpu, done.stdout.strip(), folder / "bench.sqlite"


def profiled(binary, port, limit, scratch, posts, cpu):
    """One more cold sync under perf, its CPU split into parts (cpu_split.py) as shares of `cpu`."""
    note("one more cold sync under perf record, to split its CPU …")
    folder = pull_folder(port, limit, scratch)
    split = cpu_split.profile("Bluesky", [binary, "pull", "--config", folder / "feedsync.json"],
                              dict(os.environ, BLUESKY_APP_PASSWORD=PASSWORD), folder, cpu)
    check_count(folder, posts)
    return split


def run(binary, posts=20_000, limit=100, repeat=1, scratch=None, profile=False):
    """Runs the Bluesky side and prints its report; returns whether the target was met. With
    `profile`, one more cold sync runs under perf and the report splits its CPU (cpu_split.py)."""
    own_scratch = scratch is None
    scratch = scratch or Path(tempfile.mkdtemp(prefix="feedsync-bench-bluesky-"))
    note(f"starting the fake Bluesky service with {posts:,} posts …")
    server = fake_bluesky(posts)
    try:
        note("warming the page cache …")
        ceiling(server.port, limit, parse=False)
        raw = min(ceiling(server.port, limit, parse=False) for _ in range(repeat))
        parsed = min(ceiling(server.port, limit, parse=True) for _ in range(repeat))
        note("feedsync cold sync …")
        def serving(run):
            before = server.cpu_seconds()
            return (*run(), server.cpu_seconds() - before)
        cold, cpu, summary, db, server_cpu = min(serving(lambda: cold_sync(binary, server.port, limit, scratch, posts))
                                                 for _ in range(repeat))
        floor = ceilings.sqlite_floor(db, limit, scratch, posts, repeat)
        split = profiled(binary, server.port, limit, scratch, posts, cpu) if profile else None
    finally:
        server.stop()
        if own_scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    ratio = parsed[0] / cold
    ceilings.record("Bluesky", posts, "json.loads", cold, parsed[0], floor=floor)
    print(f"\nBluesky: {posts:,} posts, pages of {limit}, {raw[1]} pages, {raw[2] / 2**20:.1f} MiB of bodies, load {load_average()}")
    print(f"  {'side':<24} {'seconds':>8} {'CPU s':>8} {'posts/s':>10}")
    sides = [("ceiling (raw)", raw[0], None), ("ceiling (json.loads)", parsed[0], None), ("feedsync cold sync", cold, cpu)]
    if floor:
        sides.append(("sqlite floor (no fetch)", floor[0], floor[1]))
    for name, seconds, used in sides:
        print(f"  {name:<24} {seconds:>8.2f} {f'{used:.2f}' if used is not None else '-':>8} {posts / seconds:>10,.0f}")
    print(f"  feedsync: {summary}")
    print(f"  cold sync / json.loads ceiling: {ratio:.0%} (target >= {TARGET:.0%}) {'PASS' if ratio >= TARGET else 'MISS'}")
    if floor:
        print(f"  sqlite floor / json.loads ceiling: {parsed[0] / floor[0]:.0%} (the most a client storing these rows in this schema, in transactions as large, reaches)")
    cpu_split.cpu_bound(cpu, server_cpu, parsed[0], TARGET)
    if profile:
        cpu_split.report(split, parsed[0], TARGET)
    return ratio >= TARGET


def main():
    p = argparse.ArgumentParser(description="feedsync's Bluesky benchmark (see the module docstring)")
    p.add_argument("--posts", type=int, default=20_000, help="timeline entries on the fake service (default 20000)")
    p.add_argument("--page-size", type=int, default=100, help="page size, 1...100 (default 100)")
    p.add_argument("--repeat", type=int, default=1, metavar="R", help="run each side R times and keep the fastest")
    p.add_argument("--no-build", action="store_true", help="use the existing .build/release/feedsync")
    p.add_argument("--profile", action="store_true",
                   help="one more cold sync under perf record -g, its CPU split into decode, map, prepare, store and http")
    args = p.parse_args()
    if args.posts < 1 or not 1 <= args.page_size <= 100 or args.repeat < 1:
        p.error("need --posts >= 1, --page-size in 1..100 and --repeat >= 1")
    if not args.no_build:
        build_release(jobs=1, say=note)
    binary = ROOT / ".build/release/feedsync"
    if not binary.exists():
        raise Broken(f"no feedsync binary at {binary}; build it first")
    run(binary, args.posts, args.page_size, args.repeat, profile=args.profile)


if __name__ == "__main__":
    run_script(main, "bench-bluesky")
