#!/usr/bin/env python3
"""The web-feeds side of the benchmark: 1,000 RSS feeds of 50 items over 20 hosts
(Fixtures/webfeed/server.py, each port a host), from one OPML file.

    python3 Benchmarks/bench_webfeeds.py                  # builds the release binaries, then every side
    python3 Benchmarks/bench_webfeeds.py --no-build       # use the existing .build/release binaries
    python3 Benchmarks/bench_webfeeds.py --scale 10000    # also feedsyncd with 10,000 feeds (slow)
    python3 Benchmarks/bench_webfeeds.py --smoke          # 40 feeds of 5 items over 4 hosts, no baseline
    python3 Benchmarks/bench.py --webfeeds                # the same, after the main benchmark

Sides, in one run against one server:
  cold sync       `feedsync pull` of the OPML config into a new database (daemon.concurrency 8
                  feeds at a time, as pull does since it syncs feeds at once), and again with
                  daemon.concurrency 1 (one feed after another), next to feed-to-sqlite 0.6.2
                  (PyPI) given the same URLs (one after another: it has no concurrency);
                  and feedsyncd on a new database until every feed has synced once.
  unchanged round `feedsync pull` again: every feed answers 304; and feedsyncd started on the
                  synced database, whose first round polls every feed at once
                  (daemon.concurrency 8, maxRequestsPerHost 1) until all have answered.
  idle            feedsyncd between polls: RSS, and CPU ticks over --idle-seconds.
  --scale N       feedsyncd with N feeds of --scale-items items: time until all synced, peak RSS
                  (VmHWM) and the most descriptors it held (/proc/PID/fd, sampled).
  --profile       one more cold `feedsync pull` under `perf record -g`, its CPU split into
                  decode, map, prepare, store, http and other (cpu_split.py).

Exit status 1 when something is broken (a command failed, a row count is wrong, a round was not
all 304); a missed target only shows as MISS. Standard library only; feed-to-sqlite goes into
Benchmarks/.venv-webfeeds.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import benchkit
import ceilings
import cpu_split
from benchkit import BENCH, ROOT, TICK, Broken, Daemon, FeedServer, descriptors, verdict

VENV = BENCH / ".venv-webfeeds"
BASELINE = "feed-to-sqlite"
BASELINE_VERSION = "0.6.2"
CONCURRENCY = 8
TARGET_VS_BASELINE = 5.0
TARGET_ROUND_S = 20.0
TARGET_IDLE_RSS_MIB = 150.0
TARGET_SCALE_HWM_MIB = 200.0


def note(message):
    print(f"bench-webfeeds: {message}", file=sys.stderr, flush=True)


def measure(cmd, cwd):
    """Runs cmd to completion (wall, CPU and peak RSS as benchkit.measure); Broken unless it exits 0."""
    run = benchkit.measure(cmd, cwd=cwd)
    if run.status != 0:
        raise Broken(f"{Path(str(cmd[0])).name} exited {run.status}: {run.stderr[-2000:]}")
    return run


def ensure_venv():
    """Benchmarks/.venv-webfeeds with feed-to-sqlite at its pinned version; returns its command."""
    probe = f"import importlib.metadata as m; assert m.version({BASELINE!r}) == {BASELINE_VERSION!r}"
    benchkit.ensure_venv(VENV, [f"{BASELINE}=={BASELINE_VERSION}"], probe, say=note)
    return VENV / "bin" / BASELINE


def feedparser_ceiling(server, scratch):
    """Seconds for feedparser_ceiling.py (in the baseline's venv, which has feedparser) over every feed."""
    listed = scratch / "ceiling-urls.txt"
    listed.write_text("\n".join(urls(server)) + "\n")
    run = benchkit.checked(benchkit.measure([VENV / "bin" / "python", BENCH / "feedparser_ceiling.py", listed]), "feedparser_ceiling.py")
    return json.loads(run.stdout)["seconds"]


def write_config(folder, server, interval="1h", concurrency=CONCURRENCY):
    """An OPML of every feed spread over every port, and a config that names it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "subscriptions.opml").write_bytes(server.call("GET", "/opml?ports=1"))
    config = folder / "feedsync.json"
    config.write_text(json.dumps({
        "store": {"integration": "sqlite", "path": "feeds.sqlite"},
        "daemon": {"concurrency": concurrency, "maxRequestsPerHost": 1},
        "feeds": [{"name": "blogs", "opml": "subscriptions.opml", "interval": interval}]}, indent=1))
    return config, folder / "feeds.sqlite"


def urls(server):
    return [f"http://127.0.0.1:{server.ports[n % len(server.ports)]}/feeds/{n}.xml" for n in range(server.feeds)]


def query(db, sql):
    with benchkit.connect(db) as conn:
        return conn.execute(sql).fetchone()[0]


def check_mirror(db, server, who):
    posts = query(db, "SELECT COUNT(*) FROM posts")
    synced = query(db, "SELECT COUNT(*) FROM feeds WHERE last_success_at IS NOT NULL")
    if posts != server.feeds * server.items or synced != server.feeds:
        raise Broken(f"{who}: {posts:,} posts from {synced:,} synced feeds, expected {server.feeds * server.items:,} "
                     f"from {server.feeds:,}")


def baseline(tool, server, folder):
    """feed-to-sqlite DB URL…: one httpx client, each feed fetched, parsed by feedparser and
    upserted with sqlite-utils in turn. `--table items` puts every feed's items in one table (by
    default it makes a table per feed title, which only slows it down)."""
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "baseline.sqlite"
    run = measure([tool, db, "--table", "items", *urls(server)], cwd=folder)
    rows = query(db, "SELECT COUNT(*) FROM items")
    if rows != server.feeds * server.items:
        raise Broken(f"{BASELINE}: {rows:,} items, expected {server.feeds * server.items:,}")
    return run


def run(bin_dir, feeds=1000, items=50, hosts=20, scale=0, scale_items=5, idle_seconds=10.0, skip_baseline=False,
        repeat=1, scratch=None, smoke=False, profile=False):
    """Runs the web-feeds side and prints its report. With `profile`, one more cold pull runs
    under perf and the report splits its CPU (cpu_split.py)."""
    feedsync, feedsyncd = bin_dir / "feedsync", bin_dir / "feedsyncd"
    for binary in (feedsync, feedsyncd):
        if not binary.exists():
            raise Broken(f"no {binary}; build it first")
    own_scratch = scratch is None
    scratch = Path(scratch or tempfile.mkdtemp(prefix="feedsync-bench-webfeeds-"))
    tool = None if skip_baseline else ensure_venv()
    load_start = " ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = []
    server = None
    ceiling, split = None, None
    try:
        note(f"starting the feed server: {feeds:,} feeds of {items} items over {hosts} ports …")
        server = FeedServer(feeds, items, hosts)

        # Cold sync: pull as it runs (daemon.concurrency feeds at once), pull one feed at a
        # time, and the baseline (one feed at a time; it has no concurrency).
        def pull_cold(attempt, concurrency=CONCURRENCY):
            config, db = write_config(scratch / f"pull-{attempt}-c{concurrency}", server, concurrency=concurrency)
            server.reset_stats()
            before = server.cpu_seconds()
            result = measure([feedsync, "pull", "--config", config], cwd=config.parent)
            check_mirror(db, server, "feedsync pull")
            return result, server.cpu_seconds() - before, config, db
        note("feedsync pull, cold …")
        cold, cold_server, config, db = min((pull_cold(i) for i in range(repeat)), key=lambda r: r[0].wall)
        note("feedsync pull, cold, one feed at a time (daemon.concurrency 1) …")
        serial, serial_server, _, _ = min((pull_cold(i, 1) for i in range(repeat)), key=lambda r: r[0].wall)
        base = None
        if tool:
            note(f"{BASELINE} {BASELINE_VERSION}, cold …")
            def base_once(attempt):
                before = server.cpu_seconds()
                result = baseline(tool, server, scratch / f"baseline-{attempt}")
                return result, server.cpu_seconds() - before
            base, base_server = min((base_once(i) for i in range(repeat)), key=lambda r: r[0].wall)
            note("feedparser ceiling: the same feeds downloaded and parsed by feedparser …")
            ceiling = feedparser_ceiling(server, scratch)
            ceilings.record("web feeds", feeds * items, "feedparser", cold.wall, ceiling)
        if profile:
            note("one more cold pull under perf record, to split its CPU …")
            profiled, profiled_db = write_config(scratch / "profile", server, concurrency=CONCURRENCY)
            split = cpu_split.profile("web feeds", [feedsync, "pull", "--config", profiled], dict(os.environ), profiled.parent, cold.cpu)
            check_mirror(profiled_db, server, "feedsync pull under perf")

        # A round of unchanged feeds through pull.
        note("feedsync pull, every feed unchanged …")
        server.reset_stats()
        rows_before = query(db, "SELECT COALESCE(SUM(rows_written), 0) FROM sync_runs")
        again = measure([feedsync, "pull", "--config", config], cwd=config.parent)
        round_statuses = server.statuses()
        written = query(db, "SELECT COALESCE(SUM(rows_written), 0) FROM sync_runs") - rows_before
        if round_statuses != {"304": feeds}:
            raise Broken(f"the unchanged round answered {round_statuses}, not {feeds} × 304")

        # feedsyncd: cold on a new database, then idle.
        note("feedsyncd, cold, then idle …")
        daemon_config, daemon_db = write_config(scratch / "daemon-cold", server)
        daemon = Daemon(feedsyncd, daemon_config)
        try:
            daemon_cold = daemon.wait_for("sync_done", feeds, timeout=600)
            check_mirror(daemon_db, server, "feedsyncd")
            time.sleep(1)     # let the last commits and log lines settle
            ticks, idle_rss = daemon.idle(idle_seconds)
            idle_fds = descriptors(daemon.proc.pid)
        finally:
            cold_hwm, _ = daemon.stop()
        cold_max_fds = daemon.max_fds

        # feedsyncd on the synced database: its first round polls every feed at once.
        note("feedsyncd, first round on the synced database (all 304) …")
        server.reset_stats()
        daemon = Daemon(feedsyncd, config)
        try:
            daemon_round = daemon.wait_for("sync_done", feeds, timeout=600)
            daemon_statuses = server.statuses()
        finally:
            daemon.stop()
        if daemon_statuses != {"304": feeds}:
            raise Broken(f"feedsyncd's round answered {daemon_statuses}, not {feeds} × 304")
    finally:
        if server:
            server.stop()

    scaled = None
    if scale:
        note(f"feedsyncd with {scale:,} feeds of {scale_items} items (slow) …")
        big = FeedServer(scale, scale_items, hosts)
        try:
            big_config, big_db = write_config(scratch / "scale", big)
            daemon = Daemon(feedsyncd, big_config)
            try:
                seconds = daemon.wait_for("sync_done", scale, timeout=3600)
                check_mirror(big_db, big, f"feedsyncd with {scale:,} feeds")
                end_fds = descriptors(daemon.proc.pid)
            finally:
                hwm, cpu = daemon.stop()
            scaled = (seconds, hwm, cpu, daemon.max_fds, end_fds)
        finally:
            big.stop()
        if own_scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    elif own_scratch:
        shutil.rmtree(scratch, ignore_errors=True)

    load_end = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nWeb feeds: {feeds:,} RSS feeds of {items} items over {hosts} hosts (ports), one OPML; "
          f"{os.cpu_count()} cores, load average {load_start} at start, {load_end} at end; best of {repeat}")
    if smoke:
        print("smoke run: the figures are too small to mean anything; it checks row counts and the 304 rounds")
    head = f"  {'side':<34}{'wall s':>8}{'CPU s':>8}{'peak RSS':>11}{'feeds/s':>9}{'server CPU s':>14}"
    print(head)
    print("  " + "-" * (len(head) - 2))
    sides = [(f"feedsync pull (cold, {CONCURRENCY} at once)", cold, cold_server),
             ("feedsync pull (cold, 1 at a time)", serial, serial_server)]
    if base:
        sides.append((f"{BASELINE} {BASELINE_VERSION} (cold)", base, base_server))
    for name, r, server_cpu in sides:
        print(f"  {name:<34}{r.wall:8.2f}{r.cpu:8.2f}{r.rss_mib:7.1f} MiB{feeds / r.wall:9.0f}{server_cpu:14.2f}")
    if base:
        ratio = base.wall / cold.wall
        print(f"  feedsync pull / {BASELINE}: {ratio:.2f}x faster (target >= {TARGET_VS_BASELINE:.0f}x) "
              f"{verdict(ratio >= TARGET_VS_BASELINE)}; one feed at a time: {base.wall / serial.wall:.2f}x")
    if profile:
        cpu_split.report(split, ceiling)
    print(f"  feedsyncd cold, until all {feeds:,} synced: {daemon_cold:.2f} s (daemon.concurrency {CONCURRENCY}, "
          f"maxRequestsPerHost 1), peak RSS {cold_hwm:.1f} MiB, at most {cold_max_fds} descriptors")
    print(f"  unchanged round, feedsync pull: {again.wall:.2f} s, CPU {again.cpu:.2f} s, {feeds:,} × 304, "
          f"{written} rows written (target <= {TARGET_ROUND_S:.0f} s) {verdict(again.wall <= TARGET_ROUND_S)}")
    print(f"  unchanged round, feedsyncd's first round on the synced store: {daemon_round:.2f} s from start "
          f"(target <= {TARGET_ROUND_S:.0f} s) {verdict(daemon_round <= TARGET_ROUND_S)}")
    print(f"  feedsyncd idle with {feeds:,} feeds: RSS {idle_rss:.1f} MiB (target <= {TARGET_IDLE_RSS_MIB:.0f}) "
          f"{verdict(idle_rss <= TARGET_IDLE_RSS_MIB)}; {ticks} CPU ticks (1/{TICK} s) in {idle_seconds:.0f} s; "
          f"{idle_fds} descriptors")
    if scaled:
        seconds, hwm, cpu, max_fds, end_fds = scaled
        print(f"  feedsyncd with {scale:,} feeds of {scale_items} items over {hosts} hosts: all synced in {seconds:.1f} s "
              f"(CPU {cpu:.1f} s), peak RSS (VmHWM) {hwm:.1f} MiB (target <= {TARGET_SCALE_HWM_MIB:.0f}) "
              f"{verdict(hwm <= TARGET_SCALE_HWM_MIB)}, at most {max_fds} descriptors (sampled), {end_fds} at the end")


def main():
    p = argparse.ArgumentParser(description="feedsync's web-feeds benchmark (see the module docstring)")
    p.add_argument("--feeds", type=int, default=1000, help="feeds on the server (default 1000)")
    p.add_argument("--items", type=int, default=50, help="items per feed (default 50)")
    p.add_argument("--hosts", type=int, default=20, help="ports the feeds are spread over (default 20)")
    p.add_argument("--scale", type=int, default=0, metavar="N", help="also run feedsyncd with N feeds (e.g. 10000)")
    p.add_argument("--scale-items", type=int, default=5, help="items per feed with --scale (default 5)")
    p.add_argument("--idle-seconds", type=float, default=10.0, help="how long the idle daemon is watched (default 10)")
    p.add_argument("--skip-baseline", action="store_true", help=f"do not run {BASELINE}")
    p.add_argument("--repeat", type=int, default=1, metavar="R", help="run each cold sync R times and keep the fastest")
    p.add_argument("--no-build", action="store_true", help="use the existing .build/release binaries")
    p.add_argument("--smoke", action="store_true",
                   help="40 feeds of 5 items over 4 hosts, no baseline (no network), no build; debug binaries if no release")
    p.add_argument("--keep", action="store_true", help="keep the scratch folder")
    p.add_argument("--profile", action="store_true",
                   help="one more cold pull under perf record -g, its CPU split into decode, map, prepare, store, http (cpu_split.py)")
    args = p.parse_args()
    if args.smoke:
        args.feeds, args.items, args.hosts, args.skip_baseline, args.no_build, args.idle_seconds = 40, 5, 4, True, True, 2.0
    if min(args.feeds, args.items, args.hosts, args.repeat, args.scale_items) < 1:
        p.error("--feeds, --items, --hosts, --repeat and --scale-items must be at least 1")
    if not args.no_build:
        benchkit.build_release(jobs=1, say=note)
    bin_dir = ROOT / ".build/release"
    if args.smoke and not (bin_dir / "feedsyncd").exists():
        bin_dir = ROOT / ".build/debug"
    scratch = None
    if args.keep:
        scratch = Path(tempfile.mkdtemp(prefix="feedsync-bench-webfeeds-"))
        note(f"scratch folder kept: {scratch}")
    run(bin_dir, args.feeds, args.items, args.hosts, args.scale, args.scale_items, args.idle_seconds, args.skip_baseline,
        args.repeat, scratch, args.smoke, args.profile)


if __name__ == "__main__":
    benchkit.run_script(main, "bench-webfeeds")
