#!/usr/bin/env python3
"""The PostgreSQL side of the benchmark, in one run:

1. A cold sync of the reference server's posts (100,000 by default, pages of 500) into a fresh
   PostgreSQL database, next to the same sync into a fresh SQLite file. Target: PostgreSQL takes
   at most 2x the SQLite time.
2. Many feeds shared by workers: 300 feeds on one reference server (each with its own cursor),
   synced once by 1 feedsyncd and then, into a fresh database, by 3 feedsyncd sharing it. It shows
   how the leases spread the feeds over the workers, and the wall time of each.

    python3 Benchmarks/bench_postgres.py                 # builds the release binary
    python3 Benchmarks/bench_postgres.py --no-build --repeat 3
    python3 Benchmarks/bench.py --postgres               # the same, after the main benchmark

The script starts its own PostgreSQL (initdb into the scratch folder, pg_ctl on a Unix socket
there, no TCP; as root it runs the server as the `postgres` user) with the server's default
durability settings (fsync and synchronous_commit on). Needs the `postgresql` package.
Exit status 1 when something is broken; a missed target shows as MISS. Standard library only.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchkit
import ceilings
from benchkit import ROOT, Broken, checked, measure, note
TARGET_RATIO = 2.0


class Postgres:
    """A throwaway server in `folder`: data, log and socket."""

    def __init__(self, folder):
        versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parent.parent.name))
        bindir = os.environ.get("PG_BINDIR") or (str(Path(versions[-1]).parent) if versions else None)
        if not bindir or not Path(bindir, "initdb").exists():
            raise Broken("no PostgreSQL server programs (apt-get install postgresql, or set PG_BINDIR)")
        self.bindir, self.folder = Path(bindir), Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.as_root = os.geteuid() == 0
        if self.as_root:
            shutil.chown(self.folder, "postgres", "postgres")
        self.tool("initdb", "-D", self.folder / "data", "-A", "trust", "-U", "postgres")
        self.tool("pg_ctl", "-D", self.folder / "data", "-l", self.folder / "log", "-w", "-o",
                  f"-k {self.folder} -c listen_addresses=''", "start")
        self.postmaster = int((self.folder / "data/postmaster.pid").read_text().split()[0])

    def tool(self, name, *args):
        cmd = [str(self.bindir / name)] + [str(a) for a in args]
        if self.as_root:
            cmd = ["runuser", "-u", "postgres", "--"] + cmd
        done = subprocess.run(cmd, capture_output=True, text=True, cwd="/tmp")
        if done.returncode != 0:
            raise Broken(f"{name} failed: {done.stderr.strip()[-400:]}")
        return done.stdout

    def create_database(self, name):
        self.tool("createdb", "-h", self.folder, "-U", "postgres", name)
        return f"postgresql:///{name}?host={self.folder}&user=postgres"

    def sql(self, database, query):
        done = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-h", str(self.folder), "-U", "postgres", "-d", database, "-c", query],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise Broken(f"psql failed: {done.stderr.strip()}")
        return done.stdout.strip()

    def children(self):
        """The postmaster's living children (its auxiliary processes and any backends)."""
        count = 0
        for stat in glob.glob("/proc/[0-9]*/stat"):
            try:
                count += int(Path(stat).read_text().rsplit(")", 1)[1].split()[1]) == self.postmaster
            except (OSError, IndexError, ValueError):
                continue
        return count

    def cpu_seconds(self, settled_from=None):
        """CPU of the postmaster and its children (the backends doing the work), living and ended, so far.
        With `settled_from` (a count of children), first waits up to 5 s for the postmaster to reap
        the backends a client just closed: a backend neither living nor reaped is counted nowhere."""
        deadline = time.time() + 5
        while settled_from is not None and self.children() > settled_from and time.time() < deadline:
            time.sleep(0.05)
        total = 0
        for stat in glob.glob("/proc/[0-9]*/stat"):
            try:
                fields = Path(stat).read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            pid = int(stat.split("/")[2])
            if pid == self.postmaster:
                # Its own time, and the time of the backends it has reaped (a pull's backend ends with it).
                total += sum(int(f) for f in fields[11:15])
            elif int(fields[1]) == self.postmaster:
                total += int(fields[11]) + int(fields[12])
        return total / os.sysconf("SC_CLK_TCK")

    def stop(self):
        try:
            self.tool("pg_ctl", "-D", self.folder / "data", "-m", "fast", "stop")
        except Broken:
            pass


def config(path, store, feeds, server, page_size, concurrency=4):
    path.write_text(json.dumps({
        "store": store,
        "feeds": [{"name": name, "interval": "1h",
                   "posts": {"integration": "httpapi", "baseURL": server.base_url, "username": benchkit.USERNAME,
                             "passwordEnv": "FEEDSYNC_PASSWORD", "pageSize": page_size}} for name in feeds],
        "daemon": {"concurrency": concurrency},
    }, indent=1))
    return path


def cold_syncs(binary, pg, server, posts, page_size, scratch, repeat):
    env = {**os.environ, "FEEDSYNC_PASSWORD": benchkit.PASSWORD}
    best = {}
    for round_ in range(repeat):
        folder = Path(tempfile.mkdtemp(prefix="cold-", dir=scratch))
        sqlite_config = config(folder / "sqlite.json", {"integration": "sqlite", "path": str(folder / "feedsync.sqlite")},
                               ["bench"], server, page_size)
        note(f"round {round_ + 1}: SQLite cold sync of {posts:,} posts …")
        run = checked(measure([binary, "pull", "--config", sqlite_config], env=env, server=server), "feedsync pull (SQLite)")
        benchkit.verify_count(folder / "feedsync.sqlite", posts, "SQLite cold sync")
        run.server_cpu = 0.0
        sqlite_wall = run.wall
        if "sqlite" not in best or run.wall < best["sqlite"].wall:
            best["sqlite"] = run
        database = f"cold{round_}"
        pg_config = config(folder / "postgres.json", {"integration": "postgres", "url": pg.create_database(database)},
                           ["bench"], server, page_size)
        note(f"round {round_ + 1}: PostgreSQL cold sync of {posts:,} posts …")
        before, children = pg.cpu_seconds(), pg.children()
        run = checked(measure([binary, "pull", "--config", pg_config], env=env, server=server), "feedsync pull (PostgreSQL)")
        run.server_cpu = pg.cpu_seconds(settled_from=children) - before
        got = int(pg.sql(database, "SELECT count(*) FROM posts"))
        if got != posts:
            raise Broken(f"PostgreSQL cold sync: posts holds {got} rows, expected {posts}")
        if "postgres" not in best or run.wall < best["postgres"].wall:
            best["postgres"] = run
        note(f"round {round_ + 1}: SQLite {sqlite_wall:.2f} s, PostgreSQL {run.wall:.2f} s ({run.wall / sqlite_wall:.2f}x), "
             f"load average {os.getloadavg()[0]:.2f}")
        # Gone before the next round, so autovacuum's work on it is not counted against that one.
        pg.tool("dropdb", "-h", pg.folder, "-U", "postgres", "--force", database)
        shutil.rmtree(folder, ignore_errors=True)
    return best


def workers_round(daemon, pg, server, feeds, workers, scratch, head):
    """Starts `workers` feedsyncd on a fresh database; seconds until every feed reached the head, and syncs per worker."""
    database = f"workers{workers}"
    url = pg.create_database(database)
    folder = Path(tempfile.mkdtemp(prefix=f"workers{workers}-", dir=scratch))
    names = [f"f{i:03d}" for i in range(feeds)]
    path = config(folder / "feedsync.json", {"integration": "postgres", "url": url}, names, server, 100)
    env = {**os.environ, "FEEDSYNC_PASSWORD": benchkit.PASSWORD}
    logs = [open(folder / f"worker{i}.log", "w+") for i in range(workers)]
    started = time.perf_counter()
    procs = [subprocess.Popen([str(daemon), "--config", str(path)], env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=log) for log in logs]
    try:
        while True:
            try:
                done = int(pg.sql(database, f"SELECT count(*) FROM feeds WHERE cursor = '{head}'"))
            except Broken:
                done = 0    # before the first worker has made the tables

            if done == feeds:
                break
            if time.perf_counter() - started > 600:
                raise Broken(f"{workers} workers synced only {done} of {feeds} feeds in 10 minutes")
            if any(p.poll() is not None for p in procs):
                raise Broken(f"a feedsyncd exited early: {benchkit.tail(Path(logs[0].name).read_text())}")
            time.sleep(0.1)
        wall = time.perf_counter() - started
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(30)
    per_worker = [Path(log.name).read_text().count("event=sync_done") for log in logs]
    for log in logs:
        log.close()
    if sum(per_worker) < feeds:
        raise Broken(f"the workers logged {sum(per_worker)} syncs for {feeds} feeds")
    return wall, per_worker


def run(binary_dir, *, posts=100_000, page_size=500, feeds=300, repeat=1, scratch=None, smoke=False):
    binary, daemon = Path(binary_dir) / "feedsync", Path(binary_dir) / "feedsyncd"
    scratch = Path(scratch or tempfile.mkdtemp(prefix="feedsync-bench-pg-"))
    scratch.mkdir(parents=True, exist_ok=True)
    # The server's folder sits directly in the temporary folder: as root the server runs as the
    # postgres user, who must reach it (a scratch folder is private to us).
    pg_folder = Path(tempfile.mkdtemp(prefix="feedsync-bench-pg-server-"))
    os.chmod(pg_folder, 0o755)
    pg = Postgres(pg_folder / "server")
    try:
        server = benchkit.RefServer(posts, page_size)
        try:
            best = cold_syncs(binary, pg, server, posts, page_size, scratch, repeat)
            # The same pages fetched and decoded with json.loads, beside the stores in this run.
            walk = checked(measure([sys.executable, benchkit.BENCH / "ceiling.py", "--port", server.port, "--limit", page_size, "--parse"]),
                           "ceiling.py")
            ceiling = json.loads(walk.stdout)["seconds"]
        finally:
            server.stop()
        small = benchkit.RefServer(200, 100)
        try:
            head = small.control("POST", "/_control/append?count=0")["head"]
            note(f"{feeds} feeds, 1 worker …")
            one = workers_round(daemon, pg, small, feeds, 1, scratch, head)
            note(f"{feeds} feeds, 3 workers …")
            three = workers_round(daemon, pg, small, feeds, 3, scratch, head)
        finally:
            small.stop()
    finally:
        pg.stop()
        shutil.rmtree(pg_folder, ignore_errors=True)
    sqlite, postgres = best["sqlite"], best["postgres"]
    ratio = postgres.wall / sqlite.wall
    ceilings.record("PostgreSQL", posts, "json.loads", postgres.wall, ceiling, f"{ratio:.2f}x SQLite")
    ceilings.record("SQLite", posts, "json.loads", sqlite.wall, ceiling, "beside PostgreSQL")
    print(f"\n## PostgreSQL store (best of {repeat}; {posts:,} posts in pages of {page_size}; "
          f"load average {os.getloadavg()[0]:.2f})\n")
    print("| cold sync | wall | feedsync CPU | database CPU | feedsync peak RSS |")
    print("|---|---|---|---|---|")
    print(f"| SQLite file | {sqlite.wall:.2f} s | {sqlite.cpu:.2f} s | (in feedsync) | {sqlite.rss_mib:.1f} MiB |")
    print(f"| PostgreSQL (Unix socket) | {postgres.wall:.2f} s | {postgres.cpu:.2f} s | {postgres.server_cpu:.2f} s | {postgres.rss_mib:.1f} MiB |")
    if smoke:
        print("\nsmoke run: the figures are too small to mean anything; it checks row counts and that the workers finish\n")
    else:
        print(f"\nPostgreSQL / SQLite: {ratio:.2f}x (target <= {TARGET_RATIO:.0f}x): {benchkit.verdict(ratio <= TARGET_RATIO)}\n")
    print(f"| {feeds} feeds of 200 posts, once each | wall until every feed is at the head | syncs per worker |")
    print("|---|---|---|")
    print(f"| 1 feedsyncd | {one[0]:.2f} s | {', '.join(map(str, one[1]))} |")
    print(f"| 3 feedsyncd | {three[0]:.2f} s | {', '.join(map(str, three[1]))} |")
    return ratio <= TARGET_RATIO


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--posts", type=int, default=100_000, help="posts for the cold syncs (default 100000)")
    p.add_argument("--feeds", type=int, default=300, help="feeds shared by the workers (default 300)")
    p.add_argument("--repeat", type=int, default=1, metavar="R", help="cold syncs per store; the best counts (default 1)")
    p.add_argument("--no-build", action="store_true", help="use the existing .build/release binaries")
    p.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = p.parse_args()
    if not args.no_build:
        benchkit.build_release()
    scratch = Path(tempfile.mkdtemp(prefix="feedsync-bench-pg-"))
    try:
        run(ROOT / ".build/release", posts=args.posts, feeds=args.feeds, repeat=args.repeat, scratch=scratch)
    except Broken as e:
        print(f"\nbench-postgres: BROKEN: {e}", file=sys.stderr)
        sys.exit(1)
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
