#!/usr/bin/env python3
"""feedsyncd with many httpapi feeds of ONE account: sessions belong to accounts.

    python3 Benchmarks/bench_accounts.py                  # 10,000 feeds (release build)
    python3 Benchmarks/bench_accounts.py --feeds 200 --no-build   # quick

Starts the reference API (Fixtures/reference-api/server.py) on loopback with --posts P, writes a
config of N httpapi feeds that all log in as the same user, starts feedsyncd on a new SQLite
store, and waits until its log says every feed synced once (event=sync_done). Meanwhile it
samples the daemon's descriptors (/proc/PID/fd). Then it reads from the server's own counters
(/_control/stats) how many logins and refreshes it answered, checks the mirror's row counts,
and stops the daemon with SIGTERM.

Targets (issue 21): all synced <= 60 s, exactly 1 login, peak RSS (VmHWM) <= 200 MiB,
< 2,000 descriptors. A missed target shows as MISS; exit status 1 only when something is
broken (the daemon died, a feed did not sync, a row count is wrong). Standard library only.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchkit  # noqa: E402
from benchkit import (REFERENCE_SERVER, ROOT, Broken, Daemon, RefServer, build_release, descriptors, load_average, note,  # noqa: E402
                      run_script, verdict)

TARGET_SECONDS = 60.0
TARGET_LOGINS = 1
TARGET_HWM_MIB = 200.0
TARGET_FDS = 2000


def reference_api(posts):
    """The reference API as a child that dies with us."""
    return RefServer(posts, None, [sys.executable, str(REFERENCE_SERVER), "--port", "0", "--posts", str(posts), "--warm",
                                   "--exit-on-stdin-eof"])


def write_config(folder, base, feeds, concurrency, per_host):
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "feedsync.json"
    config.write_text(json.dumps({
        "store": {"integration": "sqlite", "path": "feeds.sqlite"},
        "daemon": {"concurrency": concurrency, "maxRequestsPerHost": per_host},
        "feeds": [{"name": f"f{n:05d}", "interval": "1h",
                   "posts": {"integration": "httpapi", "baseURL": base, "username": "demo", "passwordEnv": "FEEDSYNC_PASSWORD"}} for n in range(feeds)]}))
    return config, folder / "feeds.sqlite"


def main():
    p = argparse.ArgumentParser(description="feedsyncd with many feeds of one account (see the module docstring)")
    p.add_argument("--feeds", type=int, default=10_000, help="httpapi feeds of the one account (default 10000)")
    p.add_argument("--posts", type=int, default=5, help="posts the account's feed holds, so each feed syncs (default 5)")
    p.add_argument("--concurrency", type=int, default=16, help="daemon.concurrency (default 16)")
    p.add_argument("--per-host", type=int, default=4, help="daemon.maxRequestsPerHost (default 4)")
    p.add_argument("--timeout", type=float, default=600, help="give up after this many seconds (default 600)")
    p.add_argument("--no-build", action="store_true", help="use the existing .build/release binaries")
    p.add_argument("--debug", action="store_true", help="use .build/debug (figures mean little)")
    p.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = p.parse_args()
    if min(args.feeds, args.posts, args.concurrency, args.per_host) < 1:
        p.error("--feeds, --posts, --concurrency and --per-host must be at least 1")
    if not args.no_build and not args.debug:
        build_release(jobs=1)
    feedsyncd = ROOT / (".build/debug" if args.debug else ".build/release") / "feedsyncd"
    scratch = Path(tempfile.mkdtemp(prefix="feedsync-bench-accounts-"))
    server = reference_api(args.posts)
    try:
        config, db = write_config(scratch, server.base_url, args.feeds, args.concurrency, args.per_host)
        note(f"feedsyncd with {args.feeds:,} httpapi feeds of one account …")
        os.environ["FEEDSYNC_PASSWORD"] = "demo"
        daemon = Daemon(feedsyncd, config)
        try:
            seconds = daemon.wait_for("sync_done", args.feeds, timeout=args.timeout)
            end_fds = descriptors(daemon.proc.pid)
        finally:
            hwm, cpu = daemon.stop()
        requests = server.stats()["requests"]
        server_cpu = server.cpu_seconds()
        with benchkit.connect(db) as c:
            rows = c.execute("SELECT COUNT(*), COUNT(DISTINCT feed) FROM posts").fetchone()
        if rows != (args.feeds * args.posts, args.feeds):
            raise Broken(f"the mirror holds {rows[0]:,} posts in {rows[1]:,} feeds, not {args.feeds * args.posts:,} in {args.feeds:,}")
        sessions = Path(str(db) + ".sessions.sqlite")
        with benchkit.connect(sessions) as c:
            stored = c.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
    finally:
        server.stop()
        if args.keep:
            note(f"scratch folder kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)

    logins = sum(requests.get("POST /v1/auth/login", {}).values())
    refreshes = sum(requests.get("POST /v1/auth/refresh", {}).values())
    feed_requests = sum(requests.get("GET /v1/feed", {}).values())
    load = load_average()
    print(f"\nOne account, {args.feeds:,} httpapi feeds of {args.posts} posts, one feedsyncd "
          f"(daemon.concurrency {args.concurrency}, maxRequestsPerHost {args.per_host}); {os.cpu_count()} cores, "
          f"load average {load} at end; {'debug' if args.debug else 'release'} build")
    print(f"  all synced in {seconds:.1f} s (target <= {TARGET_SECONDS:.0f}) {verdict(seconds <= TARGET_SECONDS)}; "
          f"{args.feeds / seconds:.0f} feeds/s; daemon CPU {cpu:.1f} s, server CPU {server_cpu:.1f} s")
    print(f"  logins {logins} (target {TARGET_LOGINS}) {verdict(logins == TARGET_LOGINS)}; refreshes {refreshes}; "
          f"{feed_requests:,} feed requests; {stored} session(s) stored")
    print(f"  peak RSS (VmHWM) {hwm:.1f} MiB (target <= {TARGET_HWM_MIB:.0f}) {verdict(hwm <= TARGET_HWM_MIB)}")
    print(f"  at most {daemon.max_fds} descriptors (sampled every 0.1 s; target < {TARGET_FDS:,}) "
          f"{verdict(daemon.max_fds < TARGET_FDS)}, {end_fds} at the end")


if __name__ == "__main__":
    run_script(main, "bench-accounts")
