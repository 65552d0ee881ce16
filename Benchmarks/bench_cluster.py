#!/usr/bin/env python3
"""Several feedsyncd sharing one PostgreSQL store: 100,000 feeds on a cluster (issue 40).

    python3 Benchmarks/bench_cluster.py                         # 3 daemons, 100,000 web + 10,000 API feeds
    python3 Benchmarks/bench_cluster.py --no-build --feeds 10000 --api-feeds 1000 --accounts 10
    python3 Benchmarks/bench_cluster.py --daemons 3 --kill      # one daemon SIGKILLed half-way

Starts its own PostgreSQL (bench_postgres.Postgres: initdb, a Unix socket, the server's default
durability), `--feed-servers` web-feed fixture servers (Fixtures/webfeed/server.py, each on
`--hosts` ports) holding `--feeds` feeds of `--items` items, and one reference API server
(Fixtures/reference-api/server.py --users) whose `--accounts` accounts own `--api-feeds` feeds of
`--posts` posts. Writes one config (OPML entries for the web feeds, httpapi feeds for the API),
starts `--daemons` feedsyncd on it at once, and waits until every feed has one successful run in
`sync_runs`. Meanwhile it samples each daemon's descriptors and the server's connections
(`pg_stat_activity`). Then it reports: the time from the start until every feed had synced once
(target 5 minutes), how the syncs split over the daemons (their `sync_done` lines), peak RSS
(`VmHWM`, target 300 MiB) and the most descriptors of each, the most connections, the logins the
API server answered (target: one per account), and it checks that no two runs of one feed
overlap in time, that each feed ran exactly once, and that the store holds every post once.

Each daemon serves `/metrics` on a port of its own, read whole by curl (HTTP/1.1, chunked) every
`--scrape-every` seconds, one daemon after another, while the feeds sync; the killed daemon is
read and parsed once more just before its kill, and the others once more at the end, before
their peak RSS is read. What each page counts in `feedsync_syncs_total{outcome="ok"}` is that daemon's share; at
the end it must equal the syncs its own log counts (`sync_done`).

With `--kill`, daemon 1 is SIGKILLed once half the feeds have synced; the leases it held must be
taken over by the others after they ran out (within one lease, `--lease`, of the expiry), as the
others' own logs say (`stale_lease_taken_over`, with the time each had planned the claim) and
their runs in `sync_runs` show.
Exit status 1 when something is broken; a missed target shows as MISS. Standard library only.
"""
import argparse
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchkit import (REFERENCE_SERVER, ROOT, TICK, Broken, Daemon, FeedServer, RefServer, build_release, cpu_ticks,  # noqa: E402
                      descriptors, load_average, note, run_script, status_kib, verdict)
from bench_postgres import Postgres  # noqa: E402

TARGET_SECONDS = 300.0
TARGET_HWM_MIB = 300.0
DATABASE = "cluster"


def username(account):
    """The reference server's --users names: demo, demo2, demo3 …"""
    return "demo" if account == 0 else f"demo{account + 1}"


def write_config(folder, args, feed_servers, api, url, metrics_ports):
    """One config for every daemon, but for its metrics port: an OPML entry per web-feed server,
    the API feeds by account."""
    entries = []
    for index, server in enumerate(feed_servers):
        outlines = "".join(f'<outline type="rss" text="w{index}-{n}" xmlUrl="http://127.0.0.1:{server.ports[n % len(server.ports)]}/feeds/{n}.xml"/>\n'
                           for n in range(server.feeds))
        (folder / f"web{index}.opml").write_text(f'<?xml version="1.0"?>\n<opml version="2.0"><head><title>web{index}</title></head>'
                                                 f'<body>\n{outlines}</body></opml>\n')
        entries.append({"name": f"web{index}", "opml": f"web{index}.opml", "interval": "1h"})
    entries += [{"name": f"api{n:05d}", "interval": "1h",
                 "posts": {"integration": "httpapi", "baseURL": api.base_url, "username": username(n % args.accounts),
                           "passwordEnv": "FEEDSYNC_PASSWORD", "pageSize": 100}} for n in range(args.api_feeds)]
    config = {"store": {"integration": "postgres", "url": url, "lease": f"{args.lease}s"},
              "daemon": {"concurrency": args.concurrency, "maxRequestsPerHost": args.per_host}, "feeds": entries}
    paths = []
    for d in range(args.daemons):   # a folder per daemon, for its log; the OPML files beside each config
        home = folder / f"daemon{d + 1}"
        home.mkdir()
        for opml in folder.glob("web*.opml"):
            shutil.copy(opml, home / opml.name)
        (home / "feedsync.json").write_text(json.dumps(config | {"metrics": {"listen": f"127.0.0.1:{metrics_ports[d]}"}}))
        paths.append(home / "feedsync.json")
    return paths


def feed_servers(args):
    per = [args.feeds // args.feed_servers + (1 if i < args.feeds % args.feed_servers else 0) for i in range(args.feed_servers)]
    return [FeedServer(n, args.items, args.hosts) for n in per if n > 0]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


OK_SYNCS = re.compile(rb'^feedsync_syncs_total\{feed="(?:[^"\\]|\\.)*",outcome="ok"\} (\d+)$', re.MULTILINE)


def fetch(port):
    """Reads one daemon's whole /metrics with curl, as a scraper that ingests it would, without
    parsing it here: what the page and its read cost the machine, not Python's parsing."""
    done = subprocess.run(["curl", "-sS", "--fail", "-o", "/dev/null", "-w", "%{size_download} %{time_total}",
                           f"http://127.0.0.1:{port}/metrics"], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise Broken(f"/metrics on port {port}: curl exited {done.returncode}: {done.stderr.strip()}")
    size, seconds = done.stdout.split()
    return {"share": None, "bytes": int(size), "seconds": float(seconds)}


def scrape(port):
    """Reads one daemon's whole /metrics as Prometheus does (HTTP/1.1, chunked): its share, the
    sum of feedsync_syncs_total{outcome="ok"}, the page's bytes and seconds."""
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request("GET", "/metrics")
        answer = connection.getresponse()
        if answer.status != 200:
            raise Broken(f"/metrics on port {port} answered {answer.status}")
        share, size, rest = 0, 0, b""
        while block := answer.read(1 << 20):
            size += len(block)
            lines, _, rest = (rest + block).rpartition(b"\n")
            share += sum(int(n) for n in OK_SYNCS.findall(lines))
        if rest:
            raise Broken(f"/metrics on port {port} ended in the middle of a line")
    finally:
        connection.close()
    return {"share": share, "bytes": size, "seconds": time.perf_counter() - started}


class Scraper(threading.Thread):
    """Scrapes each live daemon in turn every `every` seconds; keeps each one's last page's figures."""
    def __init__(self, daemons, every):
        super().__init__(daemon=True)
        self.daemons, self.every, self.stopping = daemons, every, threading.Event()
        self.lock = threading.Lock()

    def run(self):
        while not self.stopping.wait(self.every):
            for d in self.daemons:
                if d.proc.poll() is None and not self.stopping.is_set():
                    self.take(d, counted=False)

    def take(self, d, counted=True):
        """Reads the page; `counted`: parses its share too (the last reads), else reads it with curl."""
        with self.lock:   # one scrape at a time, as one Prometheus server scrapes one target
            try:
                page = scrape(d.metrics_port) if counted else fetch(d.metrics_port)
            except (OSError, http.client.HTTPException, Broken) as error:
                if d.proc.poll() is None:
                    d.scrape_errors.append(str(error))
                return
            d.scrapes.append(page)


class Session:
    """One psql session for the samples taken each second: a psql and a server backend started
    for each sample cost the machine some 0.06 CPU-s each (perf, 11,000 feeds), at that rate about
    16 CPU-s over a full run, CPU the daemons would otherwise have."""
    END = "__bench_sample_end__"

    def __init__(self, pg, database):
        self.proc = subprocess.Popen(["psql", "-X", "-q", "-A", "-t", "-h", str(pg.folder), "-U", "postgres", "-d", database],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def sql(self, query):
        """The query's output, as `Postgres.sql` gives it; Broken when the server refused it."""
        self.proc.stdin.write(query.rstrip().rstrip(";") + ";\n\\echo " + self.END + " :ERROR\n")
        self.proc.stdin.flush()
        lines = []
        while (line := self.proc.stdout.readline()) != "":
            if line.startswith(self.END):
                if line.split()[-1] != "false":
                    raise Broken("the sample's query failed")
                return "".join(lines).strip()
            lines.append(line)
        raise Broken("the sampling psql session ended")

    def __enter__(self):
        return self

    def __exit__(self, *_):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()


class Progress:
    """Which feeds have a successful run, and the database's connections, in one statement a
    second that reads only the newest rows of `sync_runs` (by id): a `count(DISTINCT feed)` over
    the whole table took the server 184-194 ms a call at 110,000 rows, against 2-4 ms for the
    newest 5,300 (EXPLAIN ANALYZE, load 5.5), and each second of it was CPU the cluster would
    otherwise spend syncing. Run ids are taken at insert and may commit out of
    order, so each read goes back `MARGIN` ids; the end is confirmed by an exact count, and a
    count that falls short makes the next read start again from the first row."""
    MARGIN = 5000

    def __init__(self):
        self.feeds, self.top = set(), 0

    def sample(self, pg, session):
        """(feeds with a successful run, connections to the cluster's database but this one)."""
        try:
            rows = session.sql(f"""SELECT (SELECT count(*) FROM pg_stat_activity WHERE datname = '{DATABASE}'
                AND pid <> pg_backend_pid()) || E'\\n' || coalesce((SELECT string_agg(id || E'\\t' || feed, E'\\n')
                FROM sync_runs WHERE error IS NULL AND id > {max(self.top - self.MARGIN, 0)}), '')""").split("\n")
        except Broken:  # before the first daemon made the tables
            return 0, int(pg.sql("postgres", f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{DATABASE}'"))
        for row in rows[1:]:
            if row:
                run, feed = row.split("\t", 1)
                self.top = max(self.top, int(run))
                self.feeds.add(feed)
        return len(self.feeds), int(rows[0])

    def confirmed(self, pg, total):
        """Whether every feed has a successful run, by an exact count; if not, the next sample rereads every row."""
        if int(pg.sql(DATABASE, "SELECT count(DISTINCT feed) FROM sync_runs WHERE error IS NULL")) >= total:
            return True
        self.top = 0
        return False


def watch(pg, daemons, total, args, scraper):
    """Seconds until `total` feeds have a successful run; most connections; the SIGKILL, if any."""
    started, connections, killed = time.perf_counter(), 0, None
    last_note = started
    progress = Progress()
    with Session(pg, DATABASE) as session:
        while True:
            done, now_connected = progress.sample(pg, session)
            connections = max(connections, now_connected)
            for d in daemons:
                if d.proc.poll() is None:
                    d.max_fds = max(d.max_fds, descriptors(d.proc.pid))
                    d.hwm = status_kib(d.proc.pid, "VmHWM") / 1024
                    d.cpu = cpu_ticks(d.proc.pid) / TICK
                elif d is not (killed or {}).get("daemon"):
                    raise Broken(f"a feedsyncd exited {d.proc.returncode}: {d.tail()}")
            now = time.perf_counter()
            if args.kill and killed is None and done >= total // 2:
                if not any(p["share"] is not None for p in daemons[0].scrapes):
                    scraper.take(daemons[0])    # once: a daemon between syncs is tried again a second later
                with scraper.lock:      # no read under way while the daemon is stopped and killed
                    killed = kill(pg, daemons[0])
            if done >= total and progress.confirmed(pg, total):
                return now - started, connections, killed
            if now - started > args.timeout:
                raise Broken(f"{done:,} of {total:,} feeds synced in {args.timeout:.0f} s")
            if now - last_note > 30:
                note(f"{done:,} of {total:,} feeds synced after {now - started:.0f} s, load average {os.getloadavg()[0]:.2f}")
                last_note = now
            time.sleep(1)


def kill(pg, daemon):
    """SIGSTOPs the daemon (its leases are no longer renewed), reads the leases it holds as they
    stand, then SIGKILLs it: nobody renews or gives them back."""
    daemon.hwm = status_kib(daemon.proc.pid, "VmHWM") / 1024
    daemon.proc.send_signal(signal.SIGSTOP)
    at = int(pg.sql(DATABASE, "SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint"))
    leases = [line.split("|") for line in pg.sql(DATABASE, f"""SELECT feed || '|' || expires_at FROM feed_leases
        WHERE holder LIKE '%process {daemon.proc.pid}' AND token IS NOT NULL""").splitlines() if line]
    if not leases:     # between syncs: let it go on and try again at the next sample
        daemon.proc.send_signal(signal.SIGCONT)
        return None
    daemon.proc.send_signal(signal.SIGKILL)
    daemon.proc.wait()
    note(f"SIGKILLed daemon 1 (process {daemon.proc.pid}) holding {len(leases)} leases")
    return {"daemon": daemon, "at": at, "leases": leases}


def log_fields(line):
    """The key=value fields of a feedsyncd log line (a quoted value may hold spaces)."""
    fields, rest = {}, line.strip()
    while "=" in rest:
        key, rest = rest.split("=", 1)
        key = key.rsplit(" ", 1)[-1]
        if rest.startswith('"'):
            value, _, rest = rest[1:].partition('"')
        else:
            value, _, rest = rest.partition(" ")
        fields[key] = value
    return fields


def takeovers(pg, killed, survivors):
    """For each lease the killed daemon held, by the survivors' own record: (ms from its expiry
    to the claim the taking daemon had planned, ms from its expiry to that daemon's run), or None
    when no survivor logged taking it over (a manual pull or a run an hour later does not count), or
    "recorded" when the killed daemon had recorded that sync's success before it was stopped (its
    run ended, only the lease was not given back yet): the feed is synced, nobody needs to take it over."""
    pid = killed["daemon"].proc.pid
    taken = {}
    for d in survivors:
        if not d.log.closed:
            d.log.flush()
        with open(d.log.name) as f:
            for line in f:
                if " event=stale_lease_taken_over " in line and f"process {pid}" in line:
                    fields = log_fields(line)
                    taken.setdefault(fields.get("feed"), int(fields.get("planned_ms", "0")))
    waits = []
    for feed, expires in killed["leases"]:
        if feed not in taken:
            recorded = pg.sql(DATABASE, f"""SELECT count(*) FROM sync_runs
                WHERE feed = '{feed.replace("'", "''")}' AND error IS NULL AND finished_at <= {killed["at"]}""")
            waits.append("recorded" if int(recorded or 0) > 0 else None)
            continue
        first = pg.sql(DATABASE, f"""SELECT min(started_at) FROM sync_runs
            WHERE feed = '{feed.replace("'", "''")}' AND error IS NULL AND started_at >= {int(expires)}""")
        waits.append((taken[feed] - int(expires), int(first) - int(expires) if first else None))
    return waits


def checks(pg, expected_posts):
    """Problems found in the store: overlapping or repeated runs, posts missing or twice."""
    problems = []
    overlaps = int(pg.sql(DATABASE, """SELECT count(*) FROM sync_runs a JOIN sync_runs b ON a.feed = b.feed AND a.id < b.id
        AND a.started_at < b.finished_at AND b.started_at < a.finished_at"""))
    if overlaps:
        problems.append(f"{overlaps} pairs of runs of one feed overlap in time")
    posts, distinct = map(int, pg.sql(DATABASE, "SELECT count(*), count(DISTINCT (feed, id)) FROM posts").split("|"))
    if posts != expected_posts or distinct != posts:
        problems.append(f"the store holds {posts:,} posts ({distinct:,} distinct), expected {expected_posts:,}")
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--daemons", type=int, default=3, help="feedsyncd sharing the store (default 3)")
    p.add_argument("--feeds", type=int, default=100_000, help="web feeds (default 100000)")
    p.add_argument("--items", type=int, default=5, help="items per web feed (default 5)")
    p.add_argument("--api-feeds", type=int, default=10_000, help="custom-API feeds (default 10000)")
    p.add_argument("--posts", type=int, default=5, help="posts of the API server's feed (default 5)")
    p.add_argument("--accounts", type=int, default=100, help="accounts the API feeds belong to (default 100)")
    p.add_argument("--feed-servers", type=int, default=4, help="web-feed server processes (default 4)")
    p.add_argument("--hosts", type=int, default=8, help="ports (hosts) per web-feed server (default 8)")
    p.add_argument("--concurrency", type=int, default=32, help="daemon.concurrency (default 32)")
    p.add_argument("--per-host", type=int, default=4, help="daemon.maxRequestsPerHost (default 4)")
    p.add_argument("--lease", type=int, default=30, help="the store's lease in seconds (default 30)")
    p.add_argument("--kill", action="store_true", help="SIGKILL daemon 1 once half the feeds synced")
    p.add_argument("--scrape-every", type=float, default=60, help="scrape each daemon's /metrics this often, in seconds, while the "
                   "feeds sync (default 60; 0: only at the end and before the kill)")
    p.add_argument("--timeout", type=float, default=1800, help="give up after this many seconds (default 1800)")
    p.add_argument("--no-build", action="store_true", help="use the existing .build/release binaries")
    p.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = p.parse_args()
    if min(args.daemons, args.feeds + args.api_feeds, args.items, args.posts, args.accounts, args.feed_servers, args.hosts) < 1:
        p.error("every count must be at least 1")
    if args.kill and args.daemons < 2:
        p.error("--kill needs at least 2 daemons")
    if not args.no_build:
        build_release(jobs=1)
    scratch = Path(tempfile.mkdtemp(prefix="feedsync-bench-cluster-"))
    pg_folder = Path(tempfile.mkdtemp(prefix="feedsync-bench-cluster-pg-"))
    os.chmod(pg_folder, 0o755)     # as root the server runs as postgres, who must reach its folder
    os.environ["FEEDSYNC_PASSWORD"] = "demo"
    total = args.feeds + args.api_feeds
    pg = Postgres(pg_folder / "server")
    webs, api, daemons = [], None, []
    try:
        note(f"{args.feeds:,} web feeds on {args.feed_servers} servers × {args.hosts} ports, {args.api_feeds:,} API feeds of "
             f"{args.accounts} accounts …")
        webs = feed_servers(args) if args.feeds else []
        api = RefServer(args.posts, None, [sys.executable, str(REFERENCE_SERVER), "--port", "0", "--posts", str(args.posts),
                                           "--users", str(args.accounts), "--warm", "--exit-on-stdin-eof"])
        ports = [free_port() for _ in range(args.daemons)]
        configs = write_config(scratch, args, webs, api, pg.create_database(DATABASE), ports)
        note(f"{args.daemons} feedsyncd on {total:,} feeds …")
        for config, port in zip(configs, ports):
            daemon = Daemon(ROOT / ".build/release/feedsyncd", config)
            daemon.hwm, daemon.cpu, daemon.metrics_port, daemon.scrapes, daemon.scrape_errors = 0.0, 0.0, port, [], []
            daemons.append(daemon)
        scraper = Scraper(daemons, args.scrape_every)
        if args.scrape_every > 0:
            scraper.start()
        seconds, connections, killed = watch(pg, daemons, total, args, scraper)
        scraper.stopping.set()
        if scraper.is_alive():
            scraper.join()          # its read under way ends before the last reads and the stops
        for d in daemons:
            if d.proc.poll() is None:
                scraper.take(d)     # the last page: every sync this daemon ran is in it
                d.hwm = status_kib(d.proc.pid, "VmHWM") / 1024
        syncs = [d.events("sync_done") for d in daemons]
        cpu = {"database": pg.cpu_seconds(), "web-feed servers": sum(w.cpu_seconds() for w in webs), "API server": api.cpu_seconds()}
        for d in daemons:
            if d.proc.poll() is None:
                d.stop()
        runs = pg.sql(DATABASE, "SELECT count(*), count(DISTINCT feed) FROM sync_runs WHERE error IS NULL").split("|")
        failed = int(pg.sql(DATABASE, "SELECT count(*) FROM sync_runs WHERE error IS NOT NULL"))
        # Which feeds ran twice: a feed the killed daemon held may have had its run recorded before the kill.
        repeated = set(pg.sql(DATABASE, "SELECT feed FROM sync_runs WHERE error IS NULL GROUP BY feed HAVING count(*) > 1").split())
        runs.append(len(repeated & {feed for feed, _ in killed["leases"]}) if killed else 0)
        problems = checks(pg, args.feeds * args.items + args.api_feeds * args.posts)
        problems += metrics_problems(daemons, syncs, killed)
        waits = takeovers(pg, killed, [d for d in daemons if d is not killed["daemon"]]) if killed else []
        logins = sum(api.stats()["requests"].get("POST /v1/auth/login", {}).values())
    finally:
        for d in daemons:
            if d.proc.poll() is None:
                d.proc.kill()
                d.proc.wait()
        for server in webs + ([api] if api else []):
            server.stop()
        pg.stop()
        shutil.rmtree(pg_folder, ignore_errors=True)
        if args.keep:
            note(f"scratch folder kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    report(args, total, seconds, syncs, daemons, connections, runs, failed, logins, killed, waits, cpu, problems)
    if problems:
        raise Broken("; ".join(problems))


def metrics_problems(daemons, syncs, killed):
    """Each survivor's last page counts exactly the syncs its log counts; the killed one's, taken
    just before the kill, no more than its log."""
    problems = []
    for n, (d, count) in enumerate(zip(daemons, syncs)):
        if d.scrape_errors:
            problems.append(f"daemon {n + 1}'s /metrics failed: {d.scrape_errors[0]}")
        counted = [p for p in d.scrapes if p["share"] is not None]
        if not counted:
            problems.append(f"daemon {n + 1}'s /metrics was never read whole")
        elif killed and d is killed["daemon"]:
            if counted[-1]["share"] > count:
                problems.append(f"daemon {n + 1}'s /metrics counted {counted[-1]['share']:,} syncs, its log {count:,}")
        elif counted[-1]["share"] != count:
            problems.append(f"daemon {n + 1}'s /metrics counted {counted[-1]['share']:,} syncs, its log {count:,}")
    return problems


def report(args, total, seconds, syncs, daemons, connections, runs, failed, logins, killed, waits, cpu, problems):
    print(f"\n{args.daemons} feedsyncd on one PostgreSQL; {args.feeds:,} web feeds of {args.items} items on "
          f"{args.feed_servers * args.hosts} hosts, {args.api_feeds:,} API feeds of {args.accounts} accounts; "
          f"daemon.concurrency {args.concurrency}, maxRequestsPerHost {args.per_host}; {os.cpu_count()} cores, "
          f"load average {load_average()} at end; release build")
    print(f"  every feed synced once in {seconds:.1f} s (target <= {TARGET_SECONDS:.0f}) {verdict(seconds <= TARGET_SECONDS)}; "
          f"{total / seconds:.0f} feeds/s")
    print(f"  successful runs {int(runs[0]):,} of {int(runs[1]):,} feeds (repeats {int(runs[0]) - int(runs[1]):,}, {runs[2]} of them of feeds the killed daemon held); failed runs {failed:,}; "
          "no two runs of one feed overlapped; every post stored once")
    print("| daemon | syncs (sync_done) | share | its /metrics says (last scrape) | scrapes: count, largest, slowest | CPU | peak RSS (VmHWM) | most descriptors |")
    print("|---|---|---|---|---|---|---|---|")
    for n, (d, count) in enumerate(zip(daemons, syncs)):
        state = " (SIGKILLed)" if killed and d is killed["daemon"] else ""
        counted = [p for p in d.scrapes if p["share"] is not None]
        said = f"{counted[-1]['share']:,}" if counted else "no scrape"
        pages = (f"{len(d.scrapes)}, {max(p['bytes'] for p in d.scrapes) / 1e6:.0f} MB, {max(p['seconds'] for p in d.scrapes):.1f} s"
                 if d.scrapes else "-")
        print(f"| {n + 1}{state} | {count:,} | {count / max(sum(syncs), 1):.0%} | {said} | {pages} | {d.cpu:.1f} s | "
              f"{d.hwm:.1f} MiB {verdict(d.hwm <= TARGET_HWM_MIB)} | {d.max_fds} |")
    print(f"  most PostgreSQL connections at once: {connections}; CPU of the rest: "
          + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in cpu.items()))
    print(f"  logins answered by the API server: {logins} for {args.accounts} accounts {verdict(logins == args.accounts)}")
    if killed:
        taken = [w for w in waits if isinstance(w, tuple) and w[1] is not None]
        recorded = waits.count("recorded")
        planned = max((w[0] for w in taken), default=0) / 1000
        slowest = max((w[1] for w in taken), default=0) / 1000
        print(f"  SIGKILL: {len(waits)} leases left; {len(taken)} taken over by the daemons left (their stale_lease_taken_over), "
              f"{recorded} whose sync the killed daemon had recorded before it stopped (not synced again); "
              f"claims planned at most {planned:.1f} s after expiry, runs begun at most {slowest:.1f} s after expiry "
              f"(lease {args.lease} s) {verdict(len(taken) + recorded == len(waits) and slowest <= args.lease)}")

if __name__ == "__main__":
    run_script(main, "bench-cluster")
