#!/usr/bin/env python3
"""feedsync benchmark harness: cold full sync and idle poll against the reference server, next to
the download ceiling and a Python "X-to-sqlite" baseline; with --mastodon, the same against the
fake Mastodon server, next to mastodon-to-sqlite. See Benchmarks/README.md.

Run from the repository root:
    python3 Benchmarks/bench.py [--posts N] [--page-size K] [--no-build] [--skip-baseline]
                                [--rss-scale] [--smoke] [--repeat R] [--keep]
    python3 Benchmarks/bench.py --mastodon [--statuses N] [--no-build] [--skip-baseline] [--repeat R] [--keep]
    python3 Benchmarks/bench.py ... --webfeeds [--scale N]   # then the web-feeds side (bench_webfeeds.py)
    python3 Benchmarks/bench.py ... --postgres              # then the PostgreSQL side (bench_postgres.py)

Exit status: 0 when every side ran and every check held (a missed performance target is reported,
not failed: this is a benchmark); 1 when something is broken (a command failed, a row count is
wrong, the idle poll was not exactly one request with nothing written).

Standard library only; the baselines' packages go into Benchmarks/.venv.
"""
import argparse
import http.client
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
VENV = BENCH / ".venv"
VENV_PYTHON = VENV / "bin" / "python"
SERVER = ROOT / "Fixtures" / "reference-api" / "server.py"
CATALOG = ROOT / "Fixtures" / "videos" / "catalog.json"
USERNAME, PASSWORD = "demo", "demo"           # the reference server's defaults
BASELINE_PACKAGES = ["requests", "sqlite-utils"]
MASTODON_SERVER = ROOT / "Fixtures" / "mastodon" / "server.py"
MASTODON_TOKEN = "bench-token"
MASTODON_LIMIT = 40                           # the API's largest page, and the one mastodon-to-sqlite asks for
MASTODON_BASELINE = "mastodon-to-sqlite"
MASTODON_BASELINE_VERSION = "0.2.1"
MASTODON_SMOKE_STATUSES = 400
TARGET_VS_MASTODON_BASELINE = 8.0
TARGET_VS_MASTODON_CEILING = 0.7
TARGET_VS_BASELINE = 5.0                      # README.md, "Targets"
TARGET_VS_CEILING = 0.5
TARGET_RSS_RATIO = 1.2
RSS_SCALE_POSTS = 1_000_000
FLOOR = "sqlite floor (posts)"


class Broken(Exception):
    """Something the benchmark relies on failed: report it and exit 1, never print figures for it."""


def note(message):
    # Progress goes to stderr so stdout holds only the report.
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def tail(text, lines=30):
    return "\n".join(text.rstrip().splitlines()[-lines:])


# ---------------------------------------------------------------------------------------------
# Measuring a child process

@dataclass
class Run:
    wall: float              # seconds from spawn to reaping
    cpu: float               # user + sys of the child (and any children it waited for)
    rss_mib: float           # peak resident set size
    status: int
    stdout: str
    stderr: str
    server_cpu: float = 0.0  # CPU the reference server burnt meanwhile: shows who the bottleneck is
    stats: dict = field(default_factory=dict)


def measure(cmd, *, env=None, server=None):
    """Run cmd to completion; wall, CPU and peak RSS come from os.wait4's rusage of that child alone.

    Output goes to files rather than pipes: nothing reads pipes while we block in wait4, and a
    child that fills one would hang the benchmark.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        server_before = server.cpu_seconds() if server else 0.0
        started = time.perf_counter()
        proc = subprocess.Popen([str(c) for c in cmd], stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                env=env, cwd=ROOT)
        _, wait_status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        server_after = server.cpu_seconds() if server else 0.0
        # Reaped by hand: tell Popen, or it would try to wait for the pid again.
        proc.returncode = os.waitstatus_to_exitcode(wait_status)
        out.seek(0)
        err.seek(0)
        return Run(wall=wall, cpu=usage.ru_utime + usage.ru_stime, rss_mib=usage.ru_maxrss / 1024,  # KiB on Linux
                   status=proc.returncode, stdout=out.read().decode(errors="replace"),
                   stderr=err.read().decode(errors="replace"), server_cpu=server_after - server_before)


def best_of(repeat, once):
    """The fastest of `repeat` runs of once(): on a shared 2-core machine the minimum is the figure
    least disturbed by whatever else ran, and the one that repeats best."""
    return min((once() for _ in range(repeat)), key=lambda result: result[0].wall)


def checked(run, what):
    if run.status != 0:
        raise Broken(f"{what} exited {run.status}\n--- stdout\n{tail(run.stdout)}\n--- stderr\n{tail(run.stderr)}")
    return run


# ---------------------------------------------------------------------------------------------
# The reference server

class RefServer:
    """server.py as a child; it dies with us even on SIGKILL because its stdin is our pipe."""

    def __init__(self, posts, page_size, cmd=None):
        self.posts = posts
        cmd = cmd or [sys.executable, str(SERVER), "--port", "0", "--posts", str(posts), "--seed", "1",
                      "--page-size", str(page_size), "--warm", "--exit-on-stdin-eof"]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        m = re.fullmatch(r"listening on 127\.0\.0\.1:(\d+)\s*", line)
        if not m:
            self.stop()
            raise Broken(f"{Path(cmd[1]).parent.name} server did not start (first line {line!r}, exit {self.proc.returncode})")
        self.port = int(m.group(1))
        self.base_url = f"http://127.0.0.1:{self.port}"

    def control(self, method, path):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, path)
            resp = conn.getresponse()
            body = resp.read()
        finally:
            conn.close()
        if resp.status != 200:
            raise Broken(f"{method} {path} answered {resp.status}: {body[:200]!r}")
        return json.loads(body)

    def reset_stats(self):
        self.control("POST", "/_control/reset-stats")

    def stats(self):
        return self.control("GET", "/_control/stats?bytes_sent=1")

    def cpu_seconds(self):
        # utime and stime are fields 14 and 15 of /proc/PID/stat, counted after the ")" that ends
        # the command name (which may itself hold spaces).
        try:
            with open(f"/proc/{self.proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            return 0.0

    def stop(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()          # --exit-on-stdin-eof: the polite way
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream and not stream.closed:
                stream.close()


# ---------------------------------------------------------------------------------------------
# The sides

def build_release():
    note("swift build -c release …")
    started = time.perf_counter()
    done = subprocess.run(["swift", "build", "-c", "release"], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise Broken(f"swift build -c release failed ({done.returncode})\n{tail(done.stdout + done.stderr, 40)}")
    note(f"built in {time.perf_counter() - started:.1f} s")


def pick_binary(smoke):
    release, debug = ROOT / ".build/release/feedsync", ROOT / ".build/debug/feedsync"
    if release.exists():
        return release, "release"
    if smoke and debug.exists():
        return debug, "debug"
    raise Broken(f"no feedsync binary at {release}" + (f" or {debug}" if smoke else "") + "; build it first")


def ensure_venv(mastodon=False):
    """Benchmarks/.venv with the baseline's packages (and with `mastodon`, mastodon-to-sqlite at
    its pinned version); reused when it already has them, else created or topped up."""
    pinned = [f"{MASTODON_BASELINE}=={MASTODON_BASELINE_VERSION}"] if mastodon else []
    probe = [str(VENV_PYTHON), "-c", "import importlib.metadata as m, requests, sqlite_utils; "
             + (f"assert m.version({MASTODON_BASELINE!r}) == {MASTODON_BASELINE_VERSION!r}" if mastodon else "")]
    if VENV_PYTHON.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return venv_versions(mastodon)
    steps = []
    if not VENV_PYTHON.exists():
        steps.append([sys.executable, "-m", "venv", "--clear", str(VENV)])
    steps.append([str(VENV_PYTHON), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                  *BASELINE_PACKAGES, *pinned])
    note(f"setting up {VENV.relative_to(ROOT)} with {' '.join(BASELINE_PACKAGES + pinned)} …")
    for cmd in steps:
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise Broken(f"{' '.join(cmd)} failed\n{tail(done.stdout + done.stderr)}")
    if subprocess.run(probe, capture_output=True).returncode != 0:
        raise Broken(f"the venv still lacks {' '.join(BASELINE_PACKAGES + pinned)}")
    return venv_versions(mastodon)


def venv_versions(mastodon=False):
    packages = BASELINE_PACKAGES + ([MASTODON_BASELINE] if mastodon else [])
    code = ("import importlib.metadata as m, sys; "
            "print(sys.version.split()[0], *(m.version(p) for p in sys.argv[1:]))")
    out = subprocess.run([str(VENV_PYTHON), "-c", code, *packages], capture_output=True, text=True)
    py, *versions = out.stdout.split()
    return f"Python {py}, " + ", ".join(f"{p} {v}" for p, v in zip(packages, versions))


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


def write_config(folder, server, page_size):
    config = {
        "store": {"integration": "sqlite", "path": str(folder / "feedsync.sqlite")},
        "feeds": [{
            "name": "bench",
            "interval": "1h",
            "posts": {"integration": "httpapi", "baseURL": server.base_url, "username": USERNAME,
                      "passwordEnv": "FEEDSYNC_PASSWORD", "pageSize": page_size},
            "videos": {"integration": "mockvideohost", "catalog": str(CATALOG)},
        }],
    }
    path = folder / "feedsync.json"
    path.write_text(json.dumps(config, indent=2) + "\n")
    return path, folder / "feedsync.sqlite"


def feedsync_pull(binary, config, server):
    server.reset_stats()
    env = {**os.environ, "FEEDSYNC_PASSWORD": PASSWORD}
    run = checked(measure([binary, "pull", "--config", config], env=env, server=server), "feedsync pull")
    run.stats = server.stats()
    return run


def count_posts(db):
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM posts").fetchone()[0]


def verify_count(db, expected, who):
    got = count_posts(db)
    if got != expected:
        raise Broken(f"{who}: posts table holds {got} rows, expected {expected}")


def last_rows_written(db):
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT rows_written FROM sync_runs ORDER BY id DESC LIMIT 1").fetchone()
    return None if row is None else row[0]


def cold_sync(binary, server, page_size, scratch, label):
    # A fresh folder each time: "cold" means no database, no session and no cursor yet.
    folder = Path(tempfile.mkdtemp(prefix=f"{label}-", dir=scratch))
    config, db = write_config(folder, server, page_size)
    note(f"feedsync cold sync of {server.posts:,} posts …")
    run = feedsync_pull(binary, config, server)
    verify_count(db, server.posts, "feedsync cold sync")
    return run, config, db


def baseline(server, page_size, scratch):
    db = Path(tempfile.mkdtemp(prefix="baseline-", dir=scratch)) / "baseline.sqlite"
    server.reset_stats()
    env = {**os.environ, "FEEDSYNC_PASSWORD": PASSWORD}
    cmd = [VENV_PYTHON, BENCH / "baseline.py", "--base-url", server.base_url, "--db", db,
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


def sqlite_floor(binary, source_db, page_size, scratch, expected):
    """SQLite alone writing the rows feedsync wrote (see sqlite_floor.c); wall and CPU are its own
    timing of the inserts, without start-up or reading the rows in."""
    run = checked(measure([binary, source_db, scratch / "floor.sqlite", str(page_size)]), "sqlite_floor")
    result = json.loads(run.stdout)
    if result["rows"] != expected:
        raise Broken(f"sqlite_floor wrote {result['rows']} rows, expected {expected}")
    run.wall, run.cpu = result["wall"], result["cpu"]
    return run,


# ---------------------------------------------------------------------------------------------
# The report

def rate(posts, seconds):
    return posts / seconds if seconds > 0 else float("inf")


def mib(n):
    return n / (1 << 20)


def verdict(ok):
    return "ok" if ok else "MISS"


def statuses(stats):
    return ", ".join(f"{key} {status}: {n}" for key, per in sorted(stats.get("requests", {}).items())
                     for status, n in sorted(per.items())) or "none"


def preamble(args, meta, title):
    """The lines above a report's table: what ran, the machine's load, the baseline's versions."""
    print()
    print(title)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} cores, load average at start {meta['load']}, at end {load}; "
          f"best of {args.repeat} run{'s' * (args.repeat > 1)} per side")
    if meta.get("baseline"):
        print(f"baseline: {meta['baseline']}")
    if args.smoke:
        print("smoke run: the figures are too small to mean anything; it checks row counts and the idle poll")
    print()


def sides(rows, n, unit, width):
    """One line per side: wall, CPU, peak RSS, items per second and what went over the wire."""
    head = f"{'side':<{width}}{'wall s':>9}{'CPU s':>9}{'CPU/wall':>10}{'peak RSS':>10}{unit:>12}" \
           f"{'requests':>10}{'MiB recv':>10}{'server CPU s':>14}"
    print(head)
    print("-" * len(head))
    for name, run, measured in rows:
        # measured: "process" (CPU and RSS of the whole client), "cpu" (CPU it timed itself) or None.
        cpu = f"{run.cpu:9.2f}{run.cpu / run.wall:9.0%} " if measured else f"{'-':>9}{'-':>10}"
        rss_col = f"{run.rss_mib:6.1f} MiB" if measured == "process" else f"{'-':>10}"
        wire = (f"{run.stats['total_requests']:10,}{mib(run.stats['bytes_sent']):10.1f}{run.server_cpu:14.2f}"
                if run.stats else f"{'-':>10}{'-':>10}{'-':>14}")
        print(f"{name:<{width}}{run.wall:9.2f}{cpu}{rss_col}{rate(n, run.wall):12,.0f}{wire}")


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
    print()
    print("feedsync cold sync said: " + (fs.stdout.strip() or "(nothing)"))
    print()
    print("idle poll (second pull, nothing changed)")
    print(f"  requests {idle.stats['total_requests']} ({statuses(idle.stats)}), "
          f"{idle.stats['bytes_sent']:,} bytes received, {idle_rows} rows written, "
          f"wall {idle.wall:.3f} s, CPU {idle.cpu:.3f} s, peak RSS {idle.rss_mib:.1f} MiB")
    print(f"  expected 1 request answered 304, 0 rows written: {verdict(idle_ok(idle, idle_rows))}")
    print("  feedsync said: " + (idle.stdout.strip() or "(nothing)"))
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
# The Mastodon side: the fake Mastodon server's home timeline, feedsync against mastodon-to-sqlite

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
    server.reset_stats()
    env = {**os.environ, "MASTODON_TOKEN": MASTODON_TOKEN}
    run = checked(measure([binary, "pull", "--config", config], env=env, server=server), "feedsync pull (mastodon)")
    run.stats = server.stats()
    return run


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
    run = checked(measure([VENV_PYTHON, BENCH / "mastodon_to_sqlite_home.py", db, "--auth", auth], server=server),
                  "mastodon_to_sqlite_home.py")
    run.stats = server.stats()
    with sqlite3.connect(db) as conn:
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
        print(f"  feedsync / {MASTODON_BASELINE:<22}{f'{r:.2f}x':>8}   target >= {TARGET_VS_MASTODON_BASELINE:g}x    "
              f"{verdict(r >= TARGET_VS_MASTODON_BASELINE)}")
    else:
        print(f"  feedsync / {MASTODON_BASELINE:<22}{'-':>8}   (skipped)")
    r = by_name["ceiling (json.loads)"].wall / fs.wall
    print(f"  feedsync / {'ceiling (json.loads)':<22}{r:8.1%}   target >= {TARGET_VS_MASTODON_CEILING:.0%}   "
          f"{verdict(r >= TARGET_VS_MASTODON_CEILING)}")
    r = by_name["ceiling (raw)"].wall / fs.wall
    print(f"  feedsync / {'ceiling (raw)':<22}{r:8.1%}   (no target)")
    print()
    print("feedsync cold sync said: " + (fs.stdout.strip() or "(nothing)"))
    print()
    print("idle poll (second pull, nothing changed)")
    print(f"  requests {idle.stats['total_requests']} ({statuses(idle.stats)}), "
          f"{idle.stats['bytes_sent']:,} bytes received, {idle_rows} rows written, "
          f"wall {idle.wall:.3f} s, CPU {idle.cpu:.3f} s, peak RSS {idle.rss_mib:.1f} MiB")
    print(f"  expected 1 request answered 200 with an empty page, 0 rows written: {verdict(mastodon_idle_ok(idle, idle_rows))}")
    print("  feedsync said: " + (idle.stdout.strip() or "(nothing)"))


def run_mastodon(args, cleanup, scratch, binary, build):
    meta = {"build": build, "load": " ".join(f"{x:.2f}" for x in os.getloadavg())}
    if not args.skip_baseline:
        meta["baseline"] = ensure_venv(mastodon=True)

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
    if not args.skip_baseline:
        base, = best_of(args.repeat, lambda: (mastodon_baseline(server, scratch),))
        rows.append((f"{MASTODON_BASELINE} {MASTODON_BASELINE_VERSION}", base, "process"))
    server.stop()

    mastodon_report(args, meta, rows, result["body_bytes"], idle, idle_rows)
    if not mastodon_idle_ok(idle, idle_rows):
        raise Broken("the Mastodon idle poll was not exactly one request for an empty page with 0 rows written")


# ---------------------------------------------------------------------------------------------

def run_httpapi(args, cleanup, scratch, binary, build):
    meta = {"build": build, "load": " ".join(f"{x:.2f}" for x in os.getloadavg())}
    if not args.skip_baseline:
        meta["baseline"] = ensure_venv()

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
    report(args, meta, rows, idle, idle_rows, rss)
    if not idle_ok(idle, idle_rows):
        raise Broken("the idle poll was not exactly one request answered 304 with 0 rows written")


def main():
    p = argparse.ArgumentParser(description="feedsync benchmark harness (see Benchmarks/README.md)")
    p.add_argument("--posts", type=int, default=100_000, help="posts on the reference server (default 100000)")
    p.add_argument("--page-size", type=int, default=500, help="page size for every client (default 500)")
    p.add_argument("--mastodon", action="store_true",
                   help=f"the Mastodon side instead: the fake Mastodon server, against {MASTODON_BASELINE} "
                        f"{MASTODON_BASELINE_VERSION}")
    p.add_argument("--statuses", type=int, default=20_000,
                   help="statuses on the fake Mastodon server, with --mastodon (default 20000)")
    p.add_argument("--no-build", action="store_true", help="use the existing .build/release/feedsync")
    p.add_argument("--skip-baseline", action="store_true", help="do not run the Python baseline (or mastodon-to-sqlite)")
    p.add_argument("--rss-scale", action="store_true",
                   help=f"also cold-sync {RSS_SCALE_POSTS:,} posts and compare peak RSS")
    p.add_argument("--smoke", action="store_true",
                   help=f"tiny CI run: 2000 posts, page size 200, then {MASTODON_SMOKE_STATUSES} Mastodon statuses; "
                        "no baselines (no network), no build (release binary if built, else debug)")
    p.add_argument("--repeat", type=int, default=1, metavar="R",
                   help="run each timed side R times and report the fastest (default 1)")
    p.add_argument("--keep", action="store_true", help="keep the scratch folder with configs and databases")
    p.add_argument("--bluesky", action="store_true", help="also run the Bluesky side (Benchmarks/bench_bluesky.py)")
    p.add_argument("--webfeeds", action="store_true",
                   help="also run the web-feeds side (Benchmarks/bench_webfeeds.py): 1,000 feeds against feed-to-sqlite; "
                        "with --smoke, 40 feeds and no baseline")
    p.add_argument("--scale", type=int, default=0, metavar="N",
                   help="with --webfeeds: also run feedsyncd with N feeds of 5 items (e.g. 10000; slow)")
    p.add_argument("--postgres", action="store_true",
                   help="also run the PostgreSQL side (Benchmarks/bench_postgres.py): 100,000 posts into PostgreSQL next to "
                        "SQLite, and 300 feeds shared by 1 and by 3 workers; with --smoke, 2,000 posts and 20 feeds")
    args = p.parse_args()
    if args.smoke:
        args.posts, args.page_size, args.skip_baseline, args.no_build = 2000, 200, True, True
        args.statuses = MASTODON_SMOKE_STATUSES
    if args.posts < 1 or not 1 <= args.page_size <= 1000 or args.repeat < 1 or args.statuses < 1:
        p.error("need --posts >= 1, --page-size in 1..1000, --statuses >= 1 and --repeat >= 1")
    if args.mastodon and args.rss_scale:
        p.error("--rss-scale is for the HTTP API side; leave out --mastodon")

    with ExitStack() as cleanup:
        scratch = Path(tempfile.mkdtemp(prefix="feedsync-bench-"))
        if args.keep:
            note(f"scratch folder kept: {scratch}")
        else:
            cleanup.callback(shutil.rmtree, scratch, ignore_errors=True)

        if not args.no_build:
            build_release()
        binary, build = pick_binary(args.smoke)
        if not args.mastodon:
            run_httpapi(args, cleanup, scratch, binary, build)
        if args.mastodon or args.smoke:
            run_mastodon(args, cleanup, scratch, binary, build)
        if args.bluesky:
            import bench_bluesky   # the Bluesky side keeps to its own file
            bench_bluesky.run(binary, repeat=args.repeat, scratch=scratch)
        if args.webfeeds:
            import bench_webfeeds  # the web-feeds side keeps to its own file
            try:
                if args.smoke:
                    bench_webfeeds.run(binary.parent, feeds=40, items=5, hosts=4, idle_seconds=2.0, skip_baseline=True,
                                       scratch=scratch / "webfeeds", smoke=True)
                else:
                    bench_webfeeds.run(binary.parent, skip_baseline=args.skip_baseline, repeat=args.repeat, scale=args.scale,
                                       scratch=scratch / "webfeeds")
            except bench_webfeeds.Broken as e:
                raise Broken(f"web feeds: {e}") from e
        if args.postgres:
            import bench_postgres  # the PostgreSQL side keeps to its own file
            try:
                if args.smoke:
                    bench_postgres.run(binary.parent, posts=2000, page_size=200, feeds=20, scratch=scratch / "postgres",
                                       smoke=True)
                else:
                    bench_postgres.run(binary.parent, repeat=args.repeat, scratch=scratch / "postgres")
            except bench_postgres.Broken as e:
                raise Broken(f"PostgreSQL: {e}") from e


if __name__ == "__main__":
    try:
        main()
    except Broken as e:
        print(f"\nbench: BROKEN: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
