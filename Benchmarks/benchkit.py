"""What every benchmark script shares: measuring a child process (wall, CPU, peak RSS), reading a
live process's CPU and memory from /proc, starting the fixture servers and feedsyncd, building
and finding the binaries, the baselines' venvs, and the report's small pieces.

Every script in Benchmarks/ imports this module; only bench.py imports other scripts (the sides
it runs after its own), so there is no import circle. Standard library only.
"""
import argparse
import contextlib
import http.client
import json
import os
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
TICK = os.sysconf("SC_CLK_TCK")
REFERENCE_SERVER = ROOT / "Fixtures" / "reference-api" / "server.py"
FEED_SERVER = ROOT / "Fixtures" / "webfeed" / "server.py"
CATALOG = ROOT / "Fixtures" / "videos" / "catalog.json"
USERNAME, PASSWORD = "demo", "demo"           # the reference server's defaults
BASELINE_VENV = BENCH / ".venv"               # the Python baselines (bench.py's and bench_mastodon.py's)
BASELINE_PACKAGES = ["requests", "sqlite-utils"]


class Broken(Exception):
    """Something the benchmark relies on failed: report it and exit 1, never print figures for it."""


def note(message):
    # Progress goes to stderr so stdout holds only the report.
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def tail(text, lines=30):
    return "\n".join(text.rstrip().splitlines()[-lines:])


def run_script(main, name):
    """Runs a script's main() and exits with its status: a Broken exits 1 with its sentence on
    stderr, ^C exits 130."""
    try:
        status = main()
    except Broken as e:
        print(f"\n{name}: BROKEN: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    sys.exit(status or 0)


def answer(conn, method, path, headers=None, body=None):
    """(response, body) of one request on `conn` that must answer 200; Broken naming the path otherwise."""
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    data = resp.read()
    if resp.status != 200:
        raise Broken(f"{method} {path} answered {resp.status}: {data[:200]!r}")
    return resp, data


def call(port, method, path, timeout=30):
    """The body of a 200 answer to one request on a connection of its own (a fixture's control API)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        return answer(conn, method, path)[1]
    finally:
        conn.close()


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
    server_cpu: float = 0.0  # CPU the server burnt meanwhile: shows who the bottleneck is
    stats: dict = field(default_factory=dict)


def measure(cmd, *, env=None, server=None, cwd=ROOT):
    """Run cmd to completion; wall, CPU and peak RSS come from os.wait4's rusage of that child alone.

    Output goes to files rather than pipes: nothing reads pipes while we block in wait4, and a
    child that fills one would hang the benchmark.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        server_before = server.cpu_seconds() if server else 0.0
        started = time.perf_counter()
        proc = subprocess.Popen([str(c) for c in cmd], stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                env=env, cwd=cwd)
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
# A live process, read through /proc

def cpu_ticks(pid):
    # utime and stime: fields 14 and 15 of /proc/PID/stat, counted after the ")" ending the name
    # (which may itself hold spaces).
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def status_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def descriptors(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


# ---------------------------------------------------------------------------------------------
# The fixture servers and feedsyncd

class RefServer:
    """The reference server (or another fixture server that speaks its control API, given `cmd`) as
    a child; it dies with us even on SIGKILL because its stdin is our pipe."""

    def __init__(self, posts, page_size, cmd=None):
        self.posts = posts
        cmd = cmd or [sys.executable, str(REFERENCE_SERVER), "--port", "0", "--posts", str(posts), "--seed", "1",
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
        return json.loads(call(self.port, method, path))

    def reset_stats(self):
        self.control("POST", "/_control/reset-stats")

    def stats(self):
        return self.control("GET", "/_control/stats?bytes_sent=1")

    def cpu_seconds(self):
        try:
            return cpu_ticks(self.proc.pid) / TICK
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


class FeedServer:
    """Fixtures/webfeed/server.py as a child that dies with us (its stdin is our pipe): `feeds`
    feeds of `items` items spread over `hosts` ports."""

    def __init__(self, feeds, items, hosts):
        self.feeds, self.items = feeds, items
        self.proc = subprocess.Popen([sys.executable, str(FEED_SERVER), "--port", "0", "--extra-ports", str(hosts - 1),
                                      "--feeds", str(feeds), "--items", str(items), "--exit-on-stdin-eof"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.ports = []
        for _ in range(hosts):
            line = self.proc.stdout.readline().strip()
            if not line.startswith("listening on 127.0.0.1:"):
                self.stop()
                raise Broken(f"the feed server did not start: {line!r}")
            self.ports.append(int(line.rsplit(":", 1)[1]))

    def call(self, method, path):
        return call(self.ports[0], method, path, timeout=60)

    def reset_stats(self):
        self.call("POST", "/_control/reset-stats")

    def statuses(self):
        """{status: count} over every feed request since the last reset."""
        counts = {}
        for key, per in json.loads(self.call("GET", "/_control/stats"))["requests"].items():
            if key.startswith("GET /feeds/"):
                for status, n in per.items():
                    counts[status] = counts.get(status, 0) + n
        return counts

    def cpu_seconds(self):
        return cpu_ticks(self.proc.pid) / TICK

    def stop(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(10)
        self.proc.stdout.close()


class Daemon:
    """feedsyncd with its log in a file, watched through /proc; `env` adds to our environment
    (a feed's secret)."""

    def __init__(self, binary, config, env=None):
        self.log = open(config.parent / "feedsyncd.log", "w+")
        self.started = time.perf_counter()
        self.proc = subprocess.Popen([str(binary), "--config", str(config)], stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log, cwd=config.parent, env={**os.environ, **(env or {})})
        self.max_fds = 0

    def events(self, event):
        self.log.flush()
        with open(self.log.name) as f:
            return sum(1 for line in f if f" event={event} " in line + " ")

    def wait_for(self, event, count, timeout):
        """Seconds until `count` log lines say `event`, sampling descriptors meanwhile."""
        deadline = time.perf_counter() + timeout
        while True:
            if self.proc.poll() is not None:
                raise Broken(f"feedsyncd exited {self.proc.returncode}: {self.tail()}")
            self.max_fds = max(self.max_fds, descriptors(self.proc.pid))
            if self.events(event) >= count:
                return time.perf_counter() - self.started
            if time.perf_counter() > deadline:
                raise Broken(f"feedsyncd logged {self.events(event):,} of {count:,} {event} in {timeout} s: {self.tail()}")
            time.sleep(0.1)

    def idle(self, seconds):
        """CPU ticks and RSS over `seconds` with nothing due."""
        before = cpu_ticks(self.proc.pid)
        time.sleep(seconds)
        return cpu_ticks(self.proc.pid) - before, status_kib(self.proc.pid, "VmRSS") / 1024

    def idle_figures(self, seconds):
        """CPU % and RSS (MiB, the larger of the start's and the end's) over `seconds` with nothing due."""
        rss_before = status_kib(self.proc.pid, "VmRSS") / 1024
        ticks, rss_after = self.idle(seconds)
        return ticks / TICK / seconds * 100, max(rss_before, rss_after)

    def tail(self):
        self.log.flush()
        with open(self.log.name) as f:
            return "".join(f.readlines()[-5:])

    def stop(self):
        hwm = status_kib(self.proc.pid, "VmHWM") / 1024 if self.proc.poll() is None else 0
        cpu = cpu_ticks(self.proc.pid) / TICK if self.proc.poll() is None else 0
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        if self.proc.returncode != 0:
            raise Broken(f"feedsyncd exited {self.proc.returncode} on SIGTERM")
        return hwm, cpu


# ---------------------------------------------------------------------------------------------
# The live sides (bench_live.py, bench_live_bluesky.py): feedsyncd following streams

def sqlite_config(folder, feeds):
    """folder/feedsync.json: `feeds` stored in folder/feedsync.sqlite; returns its path."""
    config = Path(folder) / "feedsync.json"
    config.write_text(json.dumps({"store": {"integration": "sqlite", "path": "feedsync.sqlite"}, "feeds": feeds}))
    return config


def arrivals(db, count, publish, daemon, noun):
    """For each of `count` posts, the seconds from just before `publish(n)` (which returns the
    post's id) to the moment its row is in feed `live` of `db`, polled every 1 ms from here."""
    samples = []
    for n in range(count):
        started = time.perf_counter()
        post = publish(n)
        deadline = started + 10
        while db.execute("SELECT 1 FROM posts WHERE feed = 'live' AND id = ?", (post,)).fetchone() is None:
            if time.perf_counter() > deadline:
                raise Broken(f"{noun} {post} did not arrive within 10 s:\n{daemon.tail()}")
            time.sleep(0.001)
        samples.append(time.perf_counter() - started)
    return sorted(samples)


def latency_figures(samples):
    """Median, p99 and the largest of `samples` (sorted, in seconds), with their verdicts against
    the targets of < 200 ms and < 1 s, as a report line's phrase."""
    median = statistics.median(samples) * 1000
    p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))] * 1000
    return (f"median {median:.1f} ms ({verdict(median < 200)}, target < 200), "
            f"p99 {p99:.1f} ms ({verdict(p99 < 1000)}, target < 1000), max {samples[-1] * 1000:.1f} ms")


def live_main(description, sides, count_option, counts):
    """The command line both live scripts share: build the release feedsyncd (unless --no-build),
    then `sides(binary, args)`; --smoke runs 20 posts, 2 accounts and a 5 s idle window.
    `counts` are the defaults of `count_option` and --accounts. Returns the exit status."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--no-build", action="store_true")
    p.add_argument("--smoke", action="store_true")
    p.add_argument(f"--{count_option}", type=int, default=counts[0])
    p.add_argument("--accounts", type=int, default=counts[1])
    p.add_argument("--idle-seconds", type=float, default=30)
    args = p.parse_args()
    if args.smoke:
        setattr(args, count_option, 20)
        args.accounts, args.idle_seconds = 2, 5
    if not args.no_build:
        build_release(product="feedsyncd")
    binary = ROOT / ".build" / "release" / "feedsyncd"
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    print(f"build: {commit}, release feedsyncd, {os.cpu_count()} cores")
    try:
        sides(binary, args)
    except Broken as error:
        print(f"broken: {error}", file=sys.stderr)
        return 1
    return 0


# ---------------------------------------------------------------------------------------------
# A feedsync pull of the reference server into SQLite

def reference_config(folder, server, page_size):
    """A config in `folder` that syncs the reference server's feed (and the video catalog) into
    folder/feedsync.sqlite; returns the config's path and the database's."""
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


def pull(binary, config, server, env, what="feedsync pull"):
    """`feedsync pull` measured, with the server's request statistics of that pull alone."""
    server.reset_stats()
    run = checked(measure([binary, "pull", "--config", config], env={**os.environ, **env}, server=server), what)
    run.stats = server.stats()
    return run


@contextlib.contextmanager
def connect(path, **options):
    """A connection to `path` that commits and then closes when the block ends.

    `with sqlite3.connect(...)` only commits: the connection sits in a reference cycle with its
    statement cache, so it stays open until the garbage collector runs, and that can be just
    after a child that opens the same file has started. Its closing checkpoint then holds the
    file's exclusive lock while the child reads ("database is locked").
    """
    conn = sqlite3.connect(path, **options)
    try:
        with conn:
            yield conn
    finally:
        conn.close()


def count_posts(db):
    with connect(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM posts").fetchone()[0]


def verify_count(db, expected, who):
    got = count_posts(db)
    if got != expected:
        raise Broken(f"{who}: posts table holds {got} rows, expected {expected}")


def last_rows_written(db):
    with connect(db) as conn:
        row = conn.execute("SELECT rows_written FROM sync_runs ORDER BY id DESC LIMIT 1").fetchone()
    return None if row is None else row[0]


# ---------------------------------------------------------------------------------------------
# Building, finding the binaries, the baselines' venvs

# The build `make release` ships (and `make install` and the Debian package install): the Swift
# runtime and Foundation linked in. The benchmarks time that binary, not a variant of it: linked
# in, the runtime's calls (a retain, a release) skip the dynamic linker's indirection, and a
# 20,000-post Bluesky pull took 7% less CPU than with the shared libraries (issue 40).
RELEASE_BUILD = ["swift", "build", "-c", "release", "--static-swift-stdlib"]


def build_release(jobs=None, say=note, product=None):
    """`make release`'s build (RELEASE_BUILD), with at most `jobs` jobs when given; Broken when it fails."""
    say(" ".join(RELEASE_BUILD) + " …")
    started = time.perf_counter()
    done = subprocess.run(RELEASE_BUILD + (["-j", str(jobs)] if jobs else []) + (["--product", product] if product else []),
                          cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise Broken(f"{' '.join(RELEASE_BUILD)} failed ({done.returncode})\n{tail(done.stdout + done.stderr, 40)}")
    say(f"built in {time.perf_counter() - started:.1f} s")


def pick_binary(smoke):
    release, debug = ROOT / ".build/release/feedsync", ROOT / ".build/debug/feedsync"
    if release.exists():
        return release, "release"
    if smoke and debug.exists():
        return debug, "debug"
    raise Broken(f"no feedsync binary at {release}" + (f" or {debug}" if smoke else "") + "; build it first")


def ensure_venv(venv, requirements, probe, say=note):
    """`venv` with `requirements` (pip specifiers) installed; reused when the Python code `probe`
    runs there without error, else created or topped up. Returns the venv's python."""
    python = venv / "bin" / "python"
    check = [str(python), "-c", probe]
    if python.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return python
    steps = []
    if not python.exists():
        steps.append([sys.executable, "-m", "venv", "--clear", str(venv)])
    steps.append([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *requirements])
    say(f"setting up {venv.relative_to(ROOT)} with {' '.join(requirements)} …")
    for cmd in steps:
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise Broken(f"{' '.join(cmd)} failed\n{tail(done.stdout + done.stderr)}")
    if subprocess.run(check, capture_output=True).returncode != 0:
        raise Broken(f"the venv still lacks {' '.join(requirements)}")
    return python


def venv_versions(python, packages):
    """"Python 3.x, package version, …" as the venv at `python` has them."""
    code = ("import importlib.metadata as m, sys; "
            "print(sys.version.split()[0], *(m.version(p) for p in sys.argv[1:]))")
    out = subprocess.run([str(python), "-c", code, *packages], capture_output=True, text=True)
    py, *versions = out.stdout.split()
    return f"Python {py}, " + ", ".join(f"{p} {v}" for p, v in zip(packages, versions))


# ---------------------------------------------------------------------------------------------
# The report's pieces

def rate(items, seconds):
    return items / seconds if seconds > 0 else float("inf")


def mib(n):
    return n / (1 << 20)


def verdict(ok):
    return "ok" if ok else "MISS"


def statuses(stats):
    return ", ".join(f"{key} {status}: {n}" for key, per in sorted(stats.get("requests", {}).items())
                     for status, n in sorted(per.items())) or "none"


def load_average():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def preamble(args, meta, title):
    """The lines above a report's table: what ran, the machine's load, the baseline's versions."""
    print()
    print(title)
    print(f"{os.cpu_count()} cores, load average at start {meta['load']}, at end {load_average()}; "
          f"best of {args.repeat} run{'s' * (args.repeat > 1)} per side")
    if meta.get("baseline"):
        print(f"baseline: {meta['baseline']}")
    if args.smoke:
        print("smoke run: the figures are too small to mean anything; it checks row counts and the idle poll")
    print()


def cold_and_idle(cold, idle, idle_rows, expected, ok):
    """A report's closing lines: what the cold sync said, then the idle poll (a second pull with
    nothing changed) against what it should have cost (`expected`, and whether `ok`)."""
    print()
    print("feedsync cold sync said: " + (cold.stdout.strip() or "(nothing)"))
    print()
    print("idle poll (second pull, nothing changed)")
    print(f"  requests {idle.stats['total_requests']} ({statuses(idle.stats)}), "
          f"{idle.stats['bytes_sent']:,} bytes received, {idle_rows} rows written, "
          f"wall {idle.wall:.3f} s, CPU {idle.cpu:.3f} s, peak RSS {idle.rss_mib:.1f} MiB")
    print(f"  expected {expected}: {verdict(ok)}")
    print("  feedsync said: " + (idle.stdout.strip() or "(nothing)"))


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
