#!/usr/bin/env python3
"""feedsync benchmark harness: cold full sync and idle poll against the reference server, next to
the download ceiling and a Python "X-to-sqlite" baseline; with --mastodon, the same against the
fake Mastodon server, next to mastodon-to-sqlite. See Benchmarks/README.md.

Run from the repository root:
    python3 Benchmarks/bench.py [--posts N] [--page-size K] [--no-build] [--skip-baseline]
                                [--rss-scale] [--smoke] [--repeat R] [--keep] [--profile]
    python3 Benchmarks/bench.py --mastodon [--statuses N] [--no-build] [--skip-baseline] [--repeat R] [--keep] [--profile]
    python3 Benchmarks/bench.py ... --webfeeds [--scale N]   # then the web-feeds side (bench_webfeeds.py)
    python3 Benchmarks/bench.py ... --postgres              # then the PostgreSQL side (bench_postgres.py)
    python3 Benchmarks/bench.py --rules [--no-build]        # only the rules and webhooks side (bench_rules.py)

Exit status: 0 when every side ran and every check held (a missed performance target is reported,
not failed: this is a benchmark); 1 when something is broken (a command failed, a row count is
wrong, the idle poll was not exactly one request with nothing written).

Standard library only; the baselines' packages go into Benchmarks/.venv.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

from benchkit import (BASELINE_PACKAGES, BASELINE_VENV, BENCH, PASSWORD, USERNAME, Broken, RefServer, best_of,
                      build_release, checked, cold_and_idle, ensure_venv, last_rows_written, load_average, measure, mib, note,
                      pick_binary, preamble, pull, rate, reference_config, run_script, sides, tail, venv_versions,
                      verdict, verify_count)
import bench_mastodon                          # the Mastodon side keeps to its own file
import ceilings                               # every side's share of its ceiling, in one table
import cpu_split                              # where a cold sync's CPU goes (--profile)
import results                                # the one home of the figures: Benchmarks/results.md

TARGET_VS_BASELINE = 5.0                      # Benchmarks/README.md, "Targets"
TARGET_VS_CEILING = 0.5
TARGET_RSS_RATIO = 1.2
RSS_SCALE_POSTS = 1_000_000
FLOOR = "sqlite floor (posts)"


# ---------------------------------------------------------------------------------------------
# The HTTP API side: the reference server's feed, feedsync against the Python baseline

def baseline_venv():
    """Benchmarks/.venv with the baseline's packages; their versions, for the report."""
    python = ensure_venv(BASELINE_VENV, BASELINE_PACKAGES, "import requests, sqlite_utils")
    return venv_versions(python, BASELINE_PACKAGES)


def ceiling(server, page_size, parse):
    """Internal wall time (see ceiling.py); request count and wire bytes from the server's stats."""
    server.reset_stats()
    before = server.cpu_seconds()
    cmd = [sys.executable, BENCH / "ceiling.py", "--port", server.port, "--limit", page_size,
           "--username", USERNAME, "--password", PASSWORD] + (["--parse"] if parse else [])
    run = checked(measure(cmd), "ceiling.py")
    result = json.loads(run.stdout)
    run.wall = result["seconds"]
    run.server_cpu = server.cpu_seconds() - before
    run.stats = server.stats()
    return run, result


def feedsync_pull(binary, config, server):
    return pull(binary, config, server, {"FEEDSYNC_PASSWORD": PASSWORD})


def cold_sync(binary, server, page_size, scratch, label):
    # A fresh folder each time: "cold" means no database, no session and no cursor yet.
    folder = Path(tempfile.mkdtemp(prefix=f"{label}-", dir=scratch))
    config, db = reference_config(folder, server, page_size)
    note(f"feedsync cold sync of {server.posts:,} posts …")
    run = feedsync_pull(binary, config, server)
    verify_count(db, server.posts, "feedsync cold sync")
    return run, config, db


def profiled(binary, server, page_size, scratch, cpu):
    """One more cold sync under perf, its CPU split into parts (cpu_split.py) as shares of `cpu`."""
    note("one more cold sync under perf record, to split its CPU …")
    folder = Path(tempfile.mkdtemp(prefix="profile-", dir=scratch))
    config, db = reference_config(folder, server, page_size)
    split = cpu_split.profile("HTTP API", [binary, "pull", "--config", config], {**os.environ, "FEEDSYNC_PASSWORD": PASSWORD},
                              folder, cpu)
    verify_count(db, server.posts, "feedsync cold sync under perf")
    return split


def baseline(server, page_size, scratch):
    db = Path(tempfile.mkdtemp(prefix="baseline-", dir=scratch)) / "baseline.sqlite"
    server.reset_stats()
    env = {**os.environ, "FEEDSYNC_PASSWORD": PASSWORD}
    cmd = [BASELINE_VENV / "bin" / "python", BENCH / "baseline.py", "--base-url", server.base_url, "--db", db,
           "--limit", page_size, "--username", USERNAME]
    note(f"python baseline of {server.posts:,} posts …")
    run = checked(measure(cmd, env=env, server=server), "baseline.py")
    run.stats = server.stats()
    verify_count(db, server.posts, "python baseline")
    return run


def c_compiler():
    """cc, or the clang that ships with the Swift toolchain; None when there is neither."""
    for name in ("cc", "clang", "gcc"):
        if shutil.which(name):
            return shutil.which(name)
    swift = shutil.which("swift")
    clang = swift and Path(os.path.realpath(swift)).parent / "clang"
    return str(clang) if clang and clang.exists() else None


def build_floor(scratch):
    compiler = c_compiler()
    if compiler is None:
        note("no C compiler: the sqlite floor is skipped")
        return None
    binary = scratch / "sqlite_floor"
    cmd = [compiler, "-O2", "-o", str(binary), str(BENCH / "sqlite_floor.c"), "-lsqlite3"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise Broken(f"{' '.join(cmd)} failed\n{tail(done.stdout + done.stderr)}")
    return binary


def pages_per_commit(page_size):
    """The most pages of `page_size` posts feedsync's SQLite store commits in one transaction: 8
    (SQLiteFeedStore.pagesPerTransaction) of the pages its sync holds, which are 3, or up to 12
    while those held have fewer than 1,000 posts between them (SyncEngine.decodedPagesHeldAtMost)."""
    held = 3
    while held < 12 and held * page_size < 1000:
        held += 1
    return min(8, held)


def sqlite_floor(binary, source_db, page_size, scratch, expected):
    """SQLite alone writing the rows feedsync wrote (see sqlite_floor.c), in transactions as large
    as feedsync's store makes at most (pages_per_commit); wall and CPU are its own timing of the
    inserts, without start-up or reading the rows in."""
    rows = page_size * pages_per_commit(page_size)
    run = checked(measure([binary, source_db, scratch / "floor.sqlite", str(rows)]), "sqlite_floor")
    result = json.loads(run.stdout)
    if result["rows"] != expected:
        raise Broken(f"sqlite_floor wrote {result['rows']} rows, expected {expected}")
    run.wall, run.cpu = result["wall"], result["cpu"]
    return run,


def report(args, meta, rows, idle, idle_rows, rss):
    n = args.posts
    preamble(args, meta, f"feedsync benchmark: {n:,} posts, page size {args.page_size}, reference server --seed 1 --warm, "
                         f"feedsync {meta['build']} build")
    sides(rows, n, "posts/s", 24)
    print()
    print("  wall: ceiling rows from the first request to the last byte; the sqlite floor from its first")
    print("  insert to its last commit; other rows spawn to exit.")
    print("  CPU and peak RSS: the client process (os.wait4 rusage). server CPU s: the reference server's")
    print("  CPU over the same span. MiB recv: bytes the server wrote for /v1/ answers (headers included).")
    print()

    by_name = {name: run for name, run, _ in rows}
    fs = by_name["feedsync cold sync"]
    print("ratios (posts/s)")
    if "python baseline" in by_name:
        r = rate(n, fs.wall) / rate(n, by_name["python baseline"].wall)
        print(f"  feedsync / {'python baseline':<22}{f'{r:.2f}x':>8}   target >= {TARGET_VS_BASELINE:g}x    "
              f"{verdict(r >= TARGET_VS_BASELINE)}")
    else:
        print(f"  feedsync / {'python baseline':<22}{'-':>8}   (baseline skipped)")
    # The raw ceiling is the strict reading of the target; json.loads is the least any client must add.
    for name in ("ceiling (raw)", "ceiling (json.loads)"):
        r = rate(n, fs.wall) / rate(n, by_name[name].wall)
        print(f"  feedsync / {name:<22}{r:8.1%}   target >= {TARGET_VS_CEILING:.0%}   "
              f"{verdict(r >= TARGET_VS_CEILING)}")
    floor = by_name.get(FLOOR)
    if floor:
        r = rate(n, fs.wall) / rate(n, floor.wall)
        print(f"  feedsync / {FLOOR:<22}{r:8.1%}   (no target: SQLite alone, same rows and schema)")
        budget = n / (TARGET_VS_CEILING * rate(n, by_name["ceiling (raw)"].wall))
        print(f"  {TARGET_VS_CEILING:.0%} of the raw ceiling allows {budget:.2f} s for the whole sync; "
              f"SQLite's inserts alone took {floor.wall:.2f} s")
    cold_and_idle(fs, idle, idle_rows, "1 request answered 304, 0 rows written", idle_ok(idle, idle_rows))
    if rss:
        small, big = rss
        r = big.rss_mib / small.rss_mib
        print()
        print("peak RSS scaling (cold sync)")
        print(f"  {n:>9,} posts  {small.rss_mib:7.1f} MiB   ({rate(n, small.wall):,.0f} posts/s)")
        print(f"  {RSS_SCALE_POSTS:>9,} posts  {big.rss_mib:7.1f} MiB   ({rate(RSS_SCALE_POSTS, big.wall):,.0f} posts/s, "
              f"wall {big.wall:.2f} s, CPU {big.cpu:.2f} s)")
        print(f"  ratio {r:.2f}   target <= {TARGET_RSS_RATIO:g}   {verdict(r <= TARGET_RSS_RATIO)}")
        print("  feedsync said: " + big.stdout.strip())


def idle_ok(idle, rows_written):
    return (idle.stats["total_requests"] == 1 and idle.stats["requests"] == {"GET /v1/feed": {"304": 1}}
            and rows_written == 0)


# ---------------------------------------------------------------------------------------------

def run_httpapi(args, cleanup, scratch, binary, build):
    meta = {"build": build, "load": load_average()}
    if not args.skip_baseline:
        meta["baseline"] = baseline_venv()

    note(f"starting the reference server with {args.posts:,} posts …")
    server = RefServer(args.posts, args.page_size)
    cleanup.callback(server.stop)

    # One untimed walk so every measured side meets the same warm page cache.
    note("warming the page cache …")
    ceiling(server, args.page_size, parse=False)

    note("download ceiling …")
    raw, result = best_of(args.repeat, lambda: ceiling(server, args.page_size, parse=False))
    parsed, _ = best_of(args.repeat, lambda: ceiling(server, args.page_size, parse=True))
    note(f"ceiling: {result['pages']} pages, {mib(result['body_bytes']):.1f} MiB of bodies")

    cold, config, db = best_of(args.repeat, lambda: cold_sync(binary, server, args.page_size, scratch, "cold"))
    split = profiled(binary, server, args.page_size, scratch, cold.cpu) if args.profile else None

    floor_binary = build_floor(scratch)
    if floor_binary:
        note("sqlite floor …")
        floor, = best_of(args.repeat, lambda: sqlite_floor(floor_binary, db, args.page_size, scratch, args.posts))

    note("idle poll …")
    idle = feedsync_pull(binary, config, server)
    idle_rows = last_rows_written(db)

    rows = [("ceiling (raw)", raw, None), ("ceiling (json.loads)", parsed, None),
            ("feedsync cold sync", cold, "process")]
    if floor_binary:
        rows.append((FLOOR, floor, "cpu"))
    if not args.skip_baseline:
        base, = best_of(args.repeat, lambda: (baseline(server, args.page_size, scratch),))
        rows.append(("python baseline", base, "process"))

    rss = None
    if args.rss_scale:
        server.stop()          # frees its memory before the 1M server's ~600 MB
        note(f"starting a reference server with {RSS_SCALE_POSTS:,} posts (--warm takes a while) …")
        big_server = RefServer(RSS_SCALE_POSTS, args.page_size)
        cleanup.callback(big_server.stop)
        big, _, _ = cold_sync(binary, big_server, args.page_size, scratch, "rss")
        big_server.stop()
        rss = (cold, big)

    server.stop()
    ceilings.record("HTTP API", args.posts, "json.loads", cold.wall, parsed.wall)
    report(args, meta, rows, idle, idle_rows, rss)
    if args.profile:
        cpu_split.report(split, parsed.wall)
    if not idle_ok(idle, idle_rows):
        raise Broken("the idle poll was not exactly one request answered 304 with 0 rows written")


def main():
    p = argparse.ArgumentParser(description="feedsync benchmark harness (see Benchmarks/README.md)")
    p.add_argument("--posts", type=int, default=100_000, help="posts on the reference server (default 100000)")
    p.add_argument("--page-size", type=int, default=500, help="page size for every client (default 500)")
    p.add_argument("--mastodon", action="store_true",
                   help=f"the Mastodon side instead (bench_mastodon.py): the fake Mastodon server, against "
                        f"{bench_mastodon.MASTODON_BASELINE} {bench_mastodon.MASTODON_BASELINE_VERSION}")
    p.add_argument("--statuses", type=int, default=20_000,
                   help="statuses on the fake Mastodon server, with --mastodon (default 20000)")
    p.add_argument("--no-build", action="store_true", help="use the existing .build/release/feedsync")
    p.add_argument("--skip-baseline", action="store_true", help="do not run the Python baseline (or mastodon-to-sqlite)")
    p.add_argument("--rss-scale", action="store_true",
                   help=f"also cold-sync {RSS_SCALE_POSTS:,} posts and compare peak RSS")
    p.add_argument("--smoke", action="store_true",
                   help=f"tiny CI run: 2000 posts, page size 200, then {bench_mastodon.MASTODON_SMOKE_STATUSES} Mastodon statuses; "
                        "no baselines (no network), no build (release binary if built, else debug)")
    p.add_argument("--repeat", type=int, default=1, metavar="R",
                   help="run each timed side R times and report the fastest (default 1)")
    p.add_argument("--keep", action="store_true", help="keep the scratch folder with configs and databases")
    p.add_argument("--profile", action="store_true",
                   help="the HTTP API, Mastodon, Bluesky and web-feeds sides: one more cold sync each under perf record -g, its CPU split "
                        "into decode, map, prepare, store and http (Benchmarks/cpu_split.py); not measured without perf")
    p.add_argument("--bluesky", action="store_true", help="also run the Bluesky side (Benchmarks/bench_bluesky.py)")
    p.add_argument("--webfeeds", action="store_true",
                   help="also run the web-feeds side (Benchmarks/bench_webfeeds.py): 1,000 feeds against feed-to-sqlite; "
                        "with --smoke, 40 feeds and no baseline")
    p.add_argument("--scale", type=int, default=0, metavar="N",
                   help="with --webfeeds: also run feedsyncd with N feeds of 5 items (e.g. 10000; slow)")
    p.add_argument("--postgres", action="store_true",
                   help="also run the PostgreSQL side (Benchmarks/bench_postgres.py): 100,000 posts into PostgreSQL next to "
                        "SQLite, and 300 feeds shared by 1 and by 3 workers; with --smoke, 2,000 posts and 20 feeds")
    p.add_argument("--ceilings", action="store_true",
                   help="every backend against its ceiling: the HTTP API, Mastodon, Bluesky, web-feeds and PostgreSQL sides, "
                        "then one summary table (issue 40)")
    p.add_argument("--rules", action="store_true",
                   help="only the rules and webhooks side (Benchmarks/bench_rules.py): 50 rules over a 100,000-post cold sync, "
                        "rules apply over 1,000,000 posts, 1,000 feeds with a webhook that answers in 1 s")
    p.add_argument("--media", action="store_true",
                   help="also run the media archive's side (Benchmarks/bench_media.py): 10,000 images of 100 KB from 50 "
                        "loopback hosts against curl --parallel, and a resumed 1 GB file")
    p.add_argument("--results", metavar="FILE", default=None,
                   help="add this run's report, commit and machine to FILE (default Benchmarks/results.md; "
                        "a --smoke run records nothing unless given)")
    p.add_argument("--no-results", action="store_true", help="record nothing in Benchmarks/results.md")
    p.add_argument("--reader", action="store_true",
                   help="also run the reader listener side (Benchmarks/bench_reader.py: a 1,000,000-post store)")
    args = p.parse_args()
    if args.smoke:
        args.posts, args.page_size, args.skip_baseline, args.no_build = 2000, 200, True, True
        args.statuses = bench_mastodon.MASTODON_SMOKE_STATUSES
    if args.posts < 1 or not 1 <= args.page_size <= 1000 or args.repeat < 1 or args.statuses < 1:
        p.error("need --posts >= 1, --page-size in 1..1000, --statuses >= 1 and --repeat >= 1")
    if args.mastodon and args.rss_scale:
        p.error("--rss-scale is for the HTTP API side; leave out --mastodon")

    if args.ceilings:
        args.bluesky = args.webfeeds = args.postgres = True
    record = None if args.no_results else args.results or (None if args.smoke else results.DEFAULT)
    with results.Recorder(record), ExitStack() as cleanup:
        scratch = Path(tempfile.mkdtemp(prefix="feedsync-bench-"))
        if args.keep:
            note(f"scratch folder kept: {scratch}")
        else:
            cleanup.callback(shutil.rmtree, scratch, ignore_errors=True)

        if not args.no_build:
            build_release()
        binary, build = pick_binary(args.smoke)
        if args.rules:
            import bench_rules     # the rules side keeps to its own file
            try:
                bench_rules.run(binary, page_size=args.page_size, repeat=args.repeat, scratch=scratch / "rules")
            except Broken as e:
                raise Broken(f"rules: {e}") from e
            return
        if not args.mastodon:
            run_httpapi(args, cleanup, scratch, binary, build)
        if args.mastodon or args.smoke or args.ceilings:
            bench_mastodon.run(args, cleanup, scratch, binary, build)
        if args.bluesky:
            import bench_bluesky   # the Bluesky side keeps to its own file
            bench_bluesky.run(binary, repeat=args.repeat, scratch=scratch, profile=args.profile)
        if args.webfeeds:
            import bench_webfeeds  # the web-feeds side keeps to its own file
            try:
                if args.smoke:
                    bench_webfeeds.run(binary.parent, feeds=40, items=5, hosts=4, idle_seconds=2.0, skip_baseline=True,
                                       scratch=scratch / "webfeeds", smoke=True)
                else:
                    bench_webfeeds.run(binary.parent, skip_baseline=args.skip_baseline, repeat=args.repeat, scale=args.scale,
                                       scratch=scratch / "webfeeds", profile=args.profile)
            except Broken as e:
                raise Broken(f"web feeds: {e}") from e
        if args.media:
            import bench_media  # the media archive's side keeps to its own file
            try:
                if args.smoke:
                    bench_media.run(binary.parent, images=200, hosts=4, image_bytes=10_000, big_bytes=1 << 20, scratch=scratch / "media")
                else:
                    bench_media.run(binary.parent, scratch=scratch / "media")
            except Broken as e:
                raise Broken(f"media: {e}") from e
        if args.postgres:
            import bench_postgres  # the PostgreSQL side keeps to its own file
            try:
                if args.smoke:
                    bench_postgres.run(binary.parent, posts=2000, page_size=200, feeds=20, scratch=scratch / "postgres",
                                       smoke=True)
                else:
                    bench_postgres.run(binary.parent, repeat=args.repeat, scratch=scratch / "postgres")
            except Broken as e:
                raise Broken(f"PostgreSQL: {e}") from e
        if args.reader:
            import bench_reader  # the reader listener's side keeps to its own file
            try:
                bench_reader.run(binary, 20_000 if args.smoke else 1_000_000, 3 if args.smoke else 20)
            except Broken as e:
                raise Broken(f"reader listener: {e}") from e
        ceilings.table()


if __name__ == "__main__":
    run_script(main, "bench")
