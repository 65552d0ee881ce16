#!/usr/bin/env python3
"""The reader listener (issue 36) over a large SQLite store: how long reader apps' calls take.

1. Makes a store of --posts posts (default 1,000,000) over 4 feeds with feedsync's own schema
   (`feedsync serve-user add` creates it), the posts written straight in with SQL; every post
   read but the newest 10,000.
2. Runs `feedsync serve` over it, signs in (`/accounts/ClientLogin`), and times, each --times
   times (median and worst, a new connection per request as apps make them):
   - `stream/contents` of 1,000 items of the reading list (every feed) and of one feed;
   - `stream/items/ids` of the 10,000 unread (`xt=…/read`, `n=10000`);
   - `/feeds/NAME.atom` of the newest 100, and the same with its ETag (304).

Targets (issue 36): stream/contents of 1,000 items < 50 ms; ids of 10,000 unread < 100 ms; Atom
of the newest 100 < 20 ms, its 304 < 2 ms.

--polling: 100 readers polling every 10 s while feedsyncd syncs 1,000 feeds (issue 36: syncing
no slower than 10% of its rate without them, and RSS flat). Fixtures/webfeed/server.py serves
1,000 feeds of 50 items over 20 ports (as bench_webfeeds.py); feedsyncd syncs them all once
into a new store, twice: alone, then with --readers Python clients that each sign in once
(ClientLogin) and fetch /feeds/all.atom every --period seconds (staggered), sending the ETag
they last got as If-None-Match, as feed readers do, and on after the sync for --after seconds.
Reports the seconds to sync every feed each way, the answers the readers got, and feedsyncd's
RSS when the sync ended and after the readers' last polls.

Usage: python3 Benchmarks/bench_reader.py [--posts 1000000] [--times 10] [--binary PATH] [--before PATH] [--smoke] [--results [FILE]]
(--results adds the run to Benchmarks/results.md, or FILE. --before PATH: another feedsync, an
earlier build, timed in the same run: the store is made once, by the earlier build, and copied
fresh for each binary, which then opens it with its own migrations; one table, side by side.)
"""
import argparse
import http.client
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import results  # noqa: E402
from benchkit import ROOT, Broken, note, run_script, sqlite_config  # noqa: E402

FEEDS = ["alpha", "beta", "gamma", "delta"]
UNREAD = 10_000
PASSWORD = "correct horse battery"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_store(binary, folder, posts):
    feeds = [{"name": name, "group": "All", "posts": {"integration": "webfeed", "url": f"http://127.0.0.1:9/{name}.xml"}}
             for name in FEEDS]
    config = sqlite_config(folder, feeds)
    port = free_port()
    text = config.read_text()
    config.write_text(text[:-1] + f', "serve": {{"listen": "127.0.0.1:{port}"}}}}')
    done = subprocess.run([str(binary), "serve-user", "add", "ada", "--config", str(config)], input=PASSWORD + "\n",
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise Broken(f"serve-user add failed: {done.stderr}")
    started = time.perf_counter()
    db = sqlite3.connect(folder / "feedsync.sqlite")
    db.executescript("PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF;")
    with db:
        for name in FEEDS:
            db.execute("INSERT INTO users (feed, id, handle, display_name) VALUES (?, 'u1', 'ada', 'Ada')", (name,))
        # One post a second, the feeds taking turns; the text a sentence of its own per post.
        db.execute(f"""
            WITH RECURSIVE n(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM n WHERE x < {posts - 1})
            INSERT INTO posts (feed, id, author_pk, author_id, author_handle, author_name, text, created_at, url)
            SELECT f.name, printf('p%08d', x), u.pk, 'u1', 'ada', 'Ada',
                   'Post number ' || x || ' about bread, rivers and the weather, long enough to look like one.',
                   1600000000000 + x * 1000, 'https://example.org/p/' || x
            FROM n JOIN (SELECT column1 AS i, column2 AS name FROM (VALUES {", ".join(f"({i}, '{n}')" for i, n in enumerate(FEEDS))})) f
                 ON f.i = x % {len(FEEDS)}
            JOIN users u ON u.feed = f.name
            """)
        db.execute(f"""
            INSERT INTO post_state (feed, post_id, read_at)
            SELECT feed, id, 1700000000000 FROM posts WHERE created_at < 1600000000000 + {max(posts - UNREAD, 0)} * 1000
            """)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    note(f"store of {posts:,} posts ({posts - min(UNREAD, posts):,} read) made in {time.perf_counter() - started:.1f} s")
    return config, port


def request(port, path, headers=None, body=None):
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("POST" if body else "GET", path, body=body, headers=headers or {})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return (time.perf_counter() - started) * 1000, resp.status, data, dict(resp.getheaders())


def timed(port, path, headers, times, status, check=None):
    samples = []
    for _ in range(times):
        ms, code, data, _ = request(port, path, headers)
        if code != status:
            raise Broken(f"{path}: {code} {data[:200]!r}")
        if check:
            check(data)
        samples.append(ms)
    return statistics.median(samples), max(samples)


def main():
    p = argparse.ArgumentParser(description="the reader listener over a large SQLite store")
    p.add_argument("--posts", type=int, default=1_000_000)
    p.add_argument("--times", type=int, default=10)
    p.add_argument("--binary", default=None, help="feedsync to run (default .build/release/feedsync)")
    p.add_argument("--before", default=None, help="an earlier feedsync to time beside it, over a copy of the same store")
    p.add_argument("--polling", action="store_true", help="the readers-while-syncing side instead (below)")
    p.add_argument("--readers", type=int, default=100)
    p.add_argument("--period", type=float, default=10.0)
    p.add_argument("--after", type=float, default=60.0, help="seconds the readers go on after the sync")
    p.add_argument("--feeds", type=int, default=1000)
    p.add_argument("--smoke", action="store_true", help="20,000 posts, 3 times each, the debug build if no release one")
    p.add_argument("--results", nargs="?", const=str(results.DEFAULT), default=None, metavar="FILE",
                   help="add this run to FILE (default Benchmarks/results.md)")
    args = p.parse_args()
    if args.smoke:
        args.posts, args.times = 20_000, 3
    binary = (Path(args.binary) if args.binary else ROOT / ".build/release/feedsync").resolve()
    if not binary.exists() and args.smoke:
        binary = ROOT / ".build/debug/feedsync"
    if not binary.exists():
        raise Broken(f"no feedsync at {binary}; swift build -c release first")
    with results.Recorder(args.results, script="bench_reader.py"):
        if args.polling:
            polling(binary.parent, args.readers, args.period, args.after, args.feeds)
        elif args.before:
            compare(Path(args.before), binary, args.posts, args.times)
        else:
            run(binary, args.posts, args.times)


def compare(before, after, posts, times):
    """Both binaries, each over a fresh copy of one store made by `before`, one after the other."""
    folder = Path(tempfile.mkdtemp(prefix="feedsync-bench-reader-"))
    try:
        (folder / "made").mkdir()
        config, port = make_store(before, folder / "made", posts)
        figures = []
        for binary in (before, after):
            copy = folder / "copy"
            subprocess.run(["rm", "-rf", str(copy)], check=True)
            subprocess.run(["cp", "-a", str(folder / "made"), str(copy)], check=True)
            copied = copy / config.name
            copied.write_text(config.read_text().replace(str(folder / "made"), str(copy)))
            note(f"timing {binary} (load average {results_load()})")
            figures.append(measure(binary, copied, port, posts, times))
        print(f"\n| call ({posts:,} posts, {times} times, median / worst) | {before} | {after} |")
        print("|---|---|---|")
        for (label, m0, w0), (_, m1, w1) in zip(*figures):
            print(f"| {label} | {m0:.1f} / {w0:.1f} ms | {m1:.1f} / {w1:.1f} ms |")
    finally:
        subprocess.run(["rm", "-rf", str(folder)])


def polling(bin_dir, readers, period, after, feeds):
    """feedsyncd syncing `feeds` feeds alone, then with `readers` polling; figures printed."""
    import threading
    from benchkit import Daemon, FeedServer, status_kib
    from bench_webfeeds import write_config
    server = FeedServer(feeds, 50, 20)
    folder = Path(tempfile.mkdtemp(prefix="feedsync-bench-polling-"))
    sides = []
    try:
        for with_readers in (False, True):
            side = folder / ("readers" if with_readers else "alone")
            config, _ = write_config(side, server)
            port = free_port()
            config.write_text(config.read_text()[:-1] + f', "serve": {{"listen": "127.0.0.1:{port}"}}}}')
            done = subprocess.run([str(bin_dir / "feedsync"), "serve-user", "add", "ada", "--config", str(config)],
                                  input=PASSWORD + "\n", capture_output=True, text=True)
            if done.returncode != 0:
                raise Broken(f"serve-user add failed: {done.stderr}")
            # The readers sign in before the daemon starts (through `feedsync serve`), so the sync is
            # timed from the daemon's start with every reader polling from then on.
            tokens = sign_in(bin_dir / "feedsync", config, port, readers) if with_readers else []
            note(f"feedsyncd syncing {feeds:,} feeds {'with ' + str(readers) + ' readers' if with_readers else 'alone'} "
                 f"(load average {results_load()})")
            daemon = Daemon(bin_dir / "feedsyncd", config)
            stop = threading.Event()
            answers, latencies, lock = {}, [], threading.Lock()

            def reader(index, auth):
                etag = None
                stop.wait(period * index / readers)
                while not stop.is_set():
                    headers = dict(auth, **({"If-None-Match": etag} if etag else {}))
                    try:
                        ms, code, _, got = request(port, "/feeds/all.atom", headers)
                        etag = got.get("ETag") or etag
                    except OSError:
                        ms, code = 0.0, "error"
                    with lock:
                        answers[code] = answers.get(code, 0) + 1
                        latencies.append(ms)
                    stop.wait(period)

            threads = []
            try:
                deadline = time.perf_counter() + 60
                while True:
                    try:
                        if request(port, "/reader/api/0/user-info")[1] == 401:
                            break
                    except OSError:
                        pass
                    if time.perf_counter() > deadline:
                        raise Broken(f"the listener did not answer: {daemon.tail()}")
                    time.sleep(0.1)
                for index, token in enumerate(tokens):
                    threads.append(threading.Thread(target=reader, args=(index, {"Authorization": "GoogleLogin auth=" + token}), daemon=True))
                for thread in threads:
                    thread.start()
                seconds = daemon.wait_for("sync_done", feeds, timeout=1800)
                rss_synced = status_kib(daemon.proc.pid, "VmRSS") / 1024
                time.sleep(after if with_readers else 0)
                rss_after = status_kib(daemon.proc.pid, "VmRSS") / 1024
            finally:
                stop.set()
                for thread in threads:
                    thread.join()
                hwm, _ = daemon.stop()
            polls = sum(answers.values())
            note(f"  every feed synced in {seconds:.1f} s; RSS {rss_synced:.0f} MiB then, {rss_after:.0f} MiB {after:.0f} s later, "
                 f"peak {hwm:.0f} MiB; {polls:,} polls {answers}")
            sides.append((with_readers, seconds, rss_synced, rss_after, hwm, polls, answers, latencies))
        alone, loaded = sides[0][1], sides[1][1]
        print(f"\n| feedsyncd, {feeds:,} feeds of 50 items, cold sync | seconds to sync all | posts/s | RSS at the end of the sync | "
              f"RSS {after:.0f} s later | peak RSS | reader polls (answers) | poll median / worst |")
        print("|---|---|---|---|---|---|---|---|")
        for with_readers, seconds, rss_synced, rss_after, hwm, polls, answers, latencies in sides:
            label = f"with {readers} readers every {period:g} s" if with_readers else "alone"
            timing = f"{statistics.median(latencies):.1f} / {max(latencies):.1f} ms" if latencies else "-"
            print(f"| {label} | {seconds:.1f} | {feeds * 50 / seconds:,.0f} | {rss_synced:.0f} MiB | "
                  f"{rss_after:.0f} MiB | {hwm:.0f} MiB | {polls:,} ({', '.join(f'{k}: {v:,}' for k, v in sorted(answers.items(), key=str))}) | {timing} |")
        print(f"\nsyncing with readers took {loaded / alone * 100 - 100:+.1f}% of the time alone (target: within +10%)")
    finally:
        server.stop()
        subprocess.run(["rm", "-rf", str(folder)])


def sign_in(feedsync, config, port, count):
    """`count` login tokens, from ClientLogin calls to `feedsync serve` over the store."""
    server = subprocess.Popen([str(feedsync), "serve", "--config", str(config)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        if not server.stdout.readline().startswith("serving reader apps"):
            raise Broken(f"feedsync serve did not start: {server.stderr.read()[:500]}")
        body = urllib.parse.urlencode({"Email": "ada", "Passwd": PASSWORD}).encode()
        tokens = []
        for _ in range(count):
            _, code, data, _ = request(port, "/accounts/ClientLogin", {"Content-Type": "application/x-www-form-urlencoded"}, body)
            if code != 200:
                raise Broken(f"ClientLogin: {code} {data[:200]!r}")
            tokens.append(data.decode().split("Auth=")[1].strip())
        return tokens
    finally:
        server.terminate()
        server.wait()


def results_load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run(binary, posts, times):
    """The whole side, for bench.py's --reader too."""
    folder = Path(tempfile.mkdtemp(prefix="feedsync-bench-reader-"))
    try:
        config, port = make_store(binary, folder, posts)
        results = measure(binary, config, port, posts, times)
        print(f"\n| call ({posts:,} posts, {binary.parent.name} build, {times} times) | median | worst |")
        print("|---|---|---|")
        for label, median, worst in results:
            print(f"| {label} | {median:.1f} ms | {worst:.1f} ms |")
    finally:
        subprocess.run(["rm", "-rf", str(folder)])


def measure(binary, config, port, posts, times):
    """Each call's (label, median, worst) from `feedsync serve` over the store `config` names."""
    args = argparse.Namespace(posts=posts, times=times)
    server = subprocess.Popen([str(binary), "serve", "--config", str(config)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        if not server.stdout.readline().startswith("serving reader apps"):
            raise Broken(f"feedsync serve did not start: {server.stderr.read()[:500]}")
        body = urllib.parse.urlencode({"Email": "ada", "Passwd": PASSWORD}).encode()
        _, code, data, _ = request(port, "/accounts/ClientLogin", {"Content-Type": "application/x-www-form-urlencoded"}, body)
        if code != 200:
            raise Broken(f"ClientLogin: {code} {data!r}")
        auth = {"Authorization": "GoogleLogin auth=" + data.decode().split("Auth=")[1].strip()}
        basic = {"Authorization": "Basic " + __import__("base64").b64encode(f"ada:{PASSWORD}".encode()).decode()}
        api = "/reader/api/0/"

        def items(count):
            return lambda data: count == data.count(b'"crawlTimeMsec"') or (_ for _ in ()).throw(Broken("short page"))
        rows = [
            ("stream/contents, 1,000 items, reading list", api + "stream/contents?n=1000", auth, 200, items(1000)),
            ("stream/contents, 1,000 items, one feed", api + "stream/contents/feed%2Falpha?n=1000", auth, 200, items(1000)),
            ("stream/contents, 1,000 items, oldest first (r=o)", api + "stream/contents?n=1000&r=o", auth, 200, items(1000)),
            (f"stream/items/ids, {min(UNREAD, args.posts):,} unread", api + "stream/items/ids?n=10000&xt=user%2F-%2Fstate%2Fcom.google%2Fread",
             auth, 200, lambda data: data.count(b'"id"') == min(UNREAD, args.posts) or (_ for _ in ()).throw(Broken("short ids"))),
            ("Atom, newest 100 (HTTP Basic)", "/feeds/alpha.atom", basic, 200, None),
            ("Atom, newest 100 (login token)", "/feeds/alpha.atom", auth, 200, None),
        ]
        _, _, _, headers = request(port, "/feeds/alpha.atom", auth)
        etag = headers.get("ETag") or headers.get("etag")
        rows.append(("Atom 304 (If-None-Match, login token)", "/feeds/alpha.atom", {**auth, "If-None-Match": etag}, 304, None))
        results = []
        for label, path, headers, status, check in rows:
            request(port, path, headers)   # warm the page cache and the item index
            median, worst = timed(port, path, headers, args.times, status, check)
            results.append((label, median, worst))
            note(f"{label}: median {median:.1f} ms, worst {worst:.1f} ms")
        return results
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    run_script(main, "bench_reader")
