#!/usr/bin/env python3
"""The Mastodon side of the benchmark: the fake Mastodon server's home timeline, feedsync against
mastodon-to-sqlite and the download ceiling. Run it through bench.py:

    python3 Benchmarks/bench.py --mastodon [--statuses N] [--no-build] [--skip-baseline] [--repeat R] [--keep] [--profile]
    python3 Benchmarks/bench.py --smoke    # the HTTP API side, then this one with 400 statuses

Standard library only; mastodon-to-sqlite goes into Benchmarks/.venv.
"""
import json
import os
import sys
import tempfile
from pathlib import Path

import ceilings
import cpu_split
import benchkit
from benchkit import (BASELINE_PACKAGES, BASELINE_VENV, BENCH, ROOT, Broken, RefServer, Run, best_of, checked, cold_and_idle,
                      ensure_venv, last_rows_written, load_average, measure, mib, note, preamble, pull, sides, venv_versions,
                      verdict, verify_count)

MASTODON_SERVER = ROOT / "Fixtures" / "mastodon" / "server.py"
MASTODON_TOKEN = "bench-token"
MASTODON_LIMIT = 40                           # the API's largest page, and the one mastodon-to-sqlite asks for
MASTODON_BASELINE = "mastodon-to-sqlite"
MASTODON_BASELINE_VERSION = "0.2.1"
MASTODON_SMOKE_STATUSES = 400
TARGET_VS_MASTODON_BASELINE = 8.0
TARGET_VS_MASTODON_CEILING = ceilings.TARGETS["Mastodon"]   # issue 40


def start_mastodon_server(statuses):
    cmd = [sys.executable, str(MASTODON_SERVER), "--port", "0", "--statuses", str(statuses), "--seed", "1",
           "--token", MASTODON_TOKEN, "--rate-limit", "1000000000", "--warm", "--exit-on-stdin-eof"]
    return RefServer(statuses, MASTODON_LIMIT, cmd)


def mastodon_ceiling(server, parse):
    """As ceiling(), over the home timeline: verify_credentials, then every page to the empty one."""
    server.reset_stats()
    before = server.cpu_seconds()
    cmd = [sys.executable, BENCH / "ceiling.py", "--mastodon", "--port", server.port, "--limit", MASTODON_LIMIT,
           "--token", MASTODON_TOKEN] + (["--parse"] if parse else [])
    run = checked(measure(cmd), "ceiling.py --mastodon")
    result = json.loads(run.stdout)
    run.wall = result["seconds"]
    run.server_cpu = server.cpu_seconds() - before
    run.stats = server.stats()
    return run, result


def write_mastodon_config(folder, server):
    config = {
        "store": {"integration": "sqlite", "path": str(folder / "feedsync.sqlite")},
        "feeds": [{
            "name": "bench",
            "interval": "1h",
            "posts": {"integration": "mastodon", "server": server.base_url, "accessTokenEnv": "MASTODON_TOKEN",
                      "timeline": "home", "pageSize": MASTODON_LIMIT},
        }],
    }
    path = folder / "feedsync.json"
    path.write_text(json.dumps(config, indent=2) + "\n")
    return path, folder / "feedsync.sqlite"


def mastodon_pull(binary, config, server):
    return pull(binary, config, server, {"MASTODON_TOKEN": MASTODON_TOKEN}, "feedsync pull (mastodon)")


def mastodon_cold_sync(binary, server, scratch):
    folder = Path(tempfile.mkdtemp(prefix="mastodon-", dir=scratch))
    config, db = write_mastodon_config(folder, server)
    note(f"feedsync cold sync of {server.posts:,} statuses …")
    run = mastodon_pull(binary, config, server)
    verify_count(db, server.posts, "feedsync cold sync (mastodon)")
    return run, config, db


def mastodon_baseline(server, scratch):
    """mastodon-to-sqlite's own `statuses` command through mastodon_to_sqlite_home.py."""
    folder = Path(tempfile.mkdtemp(prefix="mastodon-to-sqlite-", dir=scratch))
    auth = folder / "auth.json"
    auth.write_text(json.dumps({"mastodon_domain": f"127.0.0.1:{server.port}", "mastodon_access_token": MASTODON_TOKEN}))
    db = folder / "mastodon.db"
    server.reset_stats()
    note(f"{MASTODON_BASELINE} {MASTODON_BASELINE_VERSION} of {server.posts:,} statuses …")
    run = checked(measure([BASELINE_VENV / "bin" / "python", BENCH / "mastodon_to_sqlite_home.py", db, "--auth", auth], server=server),
                  "mastodon_to_sqlite_home.py")
    run.stats = server.stats()
    with benchkit.connect(db) as conn:
        got = conn.execute("SELECT COUNT(*) FROM statuses").fetchone()[0]
    if got != server.posts:
        raise Broken(f"{MASTODON_BASELINE}: statuses table holds {got} rows, expected {server.posts}")
    return run


def mastodon_idle_ok(idle, rows_written):
    # A forward walk from the newest status: one page, empty, nothing written.
    return (idle.stats["total_requests"] == 1 and idle.stats["requests"] == {"GET /api/v1/timelines/home": {"200": 1}}
            and rows_written == 0)


def mastodon_report(args, meta, rows, body_bytes, idle, idle_rows):
    n = args.statuses
    preamble(args, meta, f"feedsync Mastodon benchmark: {n:,} statuses ({body_bytes / n / 1000:.2f} KB each on the wire), "
                         f"limit {MASTODON_LIMIT}, fake Mastodon server --seed 1 --warm, feedsync {meta['build']} build")
    sides(rows, n, "statuses/s", 26)
    print()
    print("  wall: ceiling rows from the first request to the last byte; other rows spawn to exit.")
    print("  CPU and peak RSS: the client process (os.wait4 rusage). server CPU s: the fake server's CPU")
    print("  over the same span. MiB recv: bytes the server wrote for /api/ answers (headers included).")
    print()
    by_name = {name: run for name, run, _ in rows}
    fs = by_name["feedsync cold sync"]
    print("ratios (statuses/s)")
    base = by_name.get(f"{MASTODON_BASELINE} {MASTODON_BASELINE_VERSION}")
    if base:
        r = base.wall / fs.wall
        # Issue 40 asks for 8x "where the ceiling allows it": feedsync at the ceiling itself would be
        # the baseline's time over the ceiling's, so below 8x there the target is out of reach.
        allowed = base.wall / by_name["ceiling (json.loads)"].wall
        print(f"  feedsync / {MASTODON_BASELINE:<22}{f'{r:.2f}x':>8}   target >= {TARGET_VS_MASTODON_BASELINE:g}x    "
              f"{verdict(r >= TARGET_VS_MASTODON_BASELINE)}"
              f"{'' if allowed >= TARGET_VS_MASTODON_BASELINE else '  (the ceiling does not allow it)'}")
        print(f"  {MASTODON_BASELINE + ' / ceiling':<33}{f'{allowed:.2f}x':>8}   (feedsync / {MASTODON_BASELINE} at 100% of the "
              f"ceiling; {allowed * TARGET_VS_MASTODON_CEILING:.2f}x at {TARGET_VS_MASTODON_CEILING:.0%})")
    else:
        print(f"  feedsync / {MASTODON_BASELINE:<22}{'-':>8}   (skipped)")
    r = by_name["ceiling (json.loads)"].wall / fs.wall
    print(f"  feedsync / {'ceiling (json.loads)':<22}{r:8.1%}   target >= {TARGET_VS_MASTODON_CEILING:.0%}   "
          f"{verdict(r >= TARGET_VS_MASTODON_CEILING)}")
    r = by_name["ceiling (raw)"].wall / fs.wall
    print(f"  feedsync / {'ceiling (raw)':<22}{r:8.1%}   (no target)")
    floor = by_name.get("sqlite floor (no fetch)")
    if floor:
        r = by_name["ceiling (json.loads)"].wall / floor.wall
        print(f"  {'sqlite floor / ceiling':<33}{r:8.1%}   (the most a client storing these rows in this schema, in transactions as large, reaches)")
        if base:
            r = base.wall / floor.wall
            print(f"  {MASTODON_BASELINE + ' / sqlite floor':<33}{f'{r:.2f}x':>8}   (the most feedsync can be faster than it)")
    cold_and_idle(fs, idle, idle_rows, "1 request answered 200 with an empty page, 0 rows written", mastodon_idle_ok(idle, idle_rows))


def baseline_venv():
    """Benchmarks/.venv with mastodon-to-sqlite at its pinned version; the versions, for the report."""
    pinned = f"{MASTODON_BASELINE}=={MASTODON_BASELINE_VERSION}"
    probe = ("import importlib.metadata as m, requests, sqlite_utils; "
             f"assert m.version({MASTODON_BASELINE!r}) == {MASTODON_BASELINE_VERSION!r}")
    python = ensure_venv(BASELINE_VENV, [*BASELINE_PACKAGES, pinned], probe)
    return venv_versions(python, [*BASELINE_PACKAGES, MASTODON_BASELINE])


def run(args, cleanup, scratch, binary, build):
    """Runs the Mastodon side with bench.py's arguments (statuses, repeat, skip_baseline, smoke) and prints its report."""
    meta = {"build": build, "load": load_average()}
    if not args.skip_baseline:
        meta["baseline"] = baseline_venv()

    note(f"starting the fake Mastodon server with {args.statuses:,} statuses (--warm encodes every page) …")
    server = start_mastodon_server(args.statuses)
    cleanup.callback(server.stop)
    note("warming up …")
    mastodon_ceiling(server, parse=False)

    note("download ceiling …")
    raw, result = best_of(args.repeat, lambda: mastodon_ceiling(server, parse=False))
    parsed, _ = best_of(args.repeat, lambda: mastodon_ceiling(server, parse=True))
    note(f"ceiling: {result['pages']} pages, {mib(result['body_bytes']):.1f} MiB of bodies")

    cold, config, db = best_of(args.repeat, lambda: mastodon_cold_sync(binary, server, scratch))
    note("idle poll …")
    idle = mastodon_pull(binary, config, server)
    idle_rows = last_rows_written(db)

    rows = [("ceiling (raw)", raw, None), ("ceiling (json.loads)", parsed, None), ("feedsync cold sync", cold, "process")]
    floor = ceilings.sqlite_floor(db, MASTODON_LIMIT, scratch, args.statuses, args.repeat)
    if floor:
        # SQLite alone writing the rows feedsync wrote, in transactions as large as its store's: no fetch, no JSON.
        rows.append(("sqlite floor (no fetch)", Run(wall=floor[0], cpu=floor[1], rss_mib=0, status=0, stdout="", stderr=""), "cpu"))
    if not args.skip_baseline:
        base, = best_of(args.repeat, lambda: (mastodon_baseline(server, scratch),))
        rows.append((f"{MASTODON_BASELINE} {MASTODON_BASELINE_VERSION}", base, "process"))

    split = None
    if getattr(args, "profile", False):
        note("one more cold sync under perf record, to split its CPU …")
        folder = Path(tempfile.mkdtemp(prefix="mastodon-profile-", dir=scratch))
        profiled, db = write_mastodon_config(folder, server)
        split = cpu_split.profile("Mastodon", [binary, "pull", "--config", profiled],
                                  dict(os.environ, MASTODON_TOKEN=MASTODON_TOKEN), folder, cold.cpu)
        verify_count(db, server.posts, "feedsync cold sync under perf (mastodon)")
    server.stop()

    ceilings.record("Mastodon", args.statuses, "json.loads", cold.wall, parsed.wall, floor=floor)
    mastodon_report(args, meta, rows, result["body_bytes"], idle, idle_rows)
    cpu_split.cpu_bound(cold.cpu, cold.server_cpu, parsed.wall, ceilings.TARGETS["Mastodon"])
    if getattr(args, "profile", False):
        cpu_split.report(split, parsed.wall, ceilings.TARGETS["Mastodon"])
    if not mastodon_idle_ok(idle, idle_rows):
        raise Broken("the Mastodon idle poll was not exactly one request for an empty page with 0 rows written")

