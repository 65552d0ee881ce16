#!/usr/bin/env python3
"""The Bluesky live mirror (Jetstream) against Fixtures/bluesky/jetstream.py.

    python3 Benchmarks/bench_live_bluesky.py               # builds the release feedsyncd, then both sides
    python3 Benchmarks/bench_live_bluesky.py --no-build    # use the existing .build/release/feedsyncd
    python3 Benchmarks/bench_live_bluesky.py --smoke       # 20 posts, 2 accounts, a short idle window

Sides:
  latency   one live home feed (interval 1 h, so only the stream can deliver): --posts posts
            published one by one through /_jetstream/post (a followed author); for each, the time
            from just before the publish request to the moment its row is in the SQLite file
            (polled every 1 ms from here): the Jetstream event, the getPosts hydration and the
            write. Median and p99; targets < 200 ms and < 1 s.
  idle      feedsyncd with 10 live feeds on each of --accounts accounts (one fixture process,
            and so one account, per account; home, the list and eight author: timelines: ten
            Jetstream connections each), interval 10 min: CPU % and RSS over --idle-seconds once
            every connection has caught up. Target: <= 1 % CPU.

Exit status 1 when something is broken (a post never arrived, the daemon died); a missed
target only shows as MISS. Standard library only; the process helpers are benchkit's.
"""
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchkit import ROOT, Daemon, RefServer, arrivals, connect, latency_figures, live_main, sqlite_config, verdict  # noqa: E402

SERVER = ROOT / "Fixtures" / "bluesky" / "jetstream.py"
AUTHORS = ["did:plc:ada00000000000000000000", "did:plc:grace0000000000000000000", "did:plc:linus0000000000000000000",
           "did:web:margaret.example.org", "did:plc:kenji0000000000000000000", "did:plc:noor00000000000000000000",
           "did:plc:mateo0000000000000000000", "did:plc:chiara000000000000000000"]
LIST = "at://did:plc:ownerowner0000000000000/app.bsky.graph.list/3kfriends0001"
TIMELINES = ["home", f"list:{LIST}"] + [f"author:{did}" for did in AUTHORS]
SECRET = {"BLUESKY_APP_PASSWORD": "app-pass-word"}


def fixture(posts):
    """The fake Bluesky service and Jetstream for one account, as a child that dies with us."""
    return RefServer(posts, None, [sys.executable, str(SERVER), "--port", "0", "--exit-on-stdin-eof", "--posts", str(posts)])


def feed(name, server, timeline, interval):
    return {"name": name, "interval": interval, "posts": {
        "integration": "bluesky", "service": server.base_url, "identifier": "me.test", "appPasswordEnv": "BLUESKY_APP_PASSWORD",
        "timeline": timeline, "stream": True, "jetstreamURL": f"ws://127.0.0.1:{server.port}/subscribe"}}


def latency(binary, posts):
    server = fixture(40)
    try:
        with tempfile.TemporaryDirectory() as folder:
            daemon = Daemon(binary, sqlite_config(folder, [feed("live", server, "home", "1h")]), SECRET)
            try:
                daemon.wait_for("live_caught_up", 1, 60)
                with connect(Path(folder) / "feedsync.sqlite", timeout=30) as db:
                    samples = arrivals(db, posts, lambda n: server.control("POST", f"/_jetstream/post?did={AUTHORS[n % len(AUTHORS)]}")["uri"],
                                       daemon, "post")
                requests = server.control("GET", "/_control/stats")["requests"]
            finally:
                daemon.stop()
    finally:
        server.stop()
    polls = sum(requests.get("GET app.bsky.feed.getTimeline", {}).values())
    hydrations = sum(requests.get("GET app.bsky.feed.getPosts", {}).values())
    print(f"latency: {len(samples)} posts published one by one: {latency_figures(samples)}; "
          f"getPosts calls {hydrations}, timeline polls in all {polls} (the catch-up)")


def idle(binary, accounts, seconds):
    servers = [fixture(100) for _ in range(accounts)]
    try:
        with tempfile.TemporaryDirectory() as folder:
            feeds = [feed(f"a{k}-{i}", server, timeline, "10m") for k, server in enumerate(servers) for i, timeline in enumerate(TIMELINES)]
            daemon = Daemon(binary, sqlite_config(folder, feeds), SECRET)
            try:
                daemon.wait_for("sync_done", len(feeds), 300)
                daemon.wait_for("live_caught_up", len(feeds), 300)
                time.sleep(2)
                cpu, rss = daemon.idle_figures(seconds)
                opened = sum(s.control("GET", "/_jetstream/stats")["open"] for s in servers)
            finally:
                daemon.stop()
    finally:
        for server in servers:
            server.stop()
    print(f"idle: {len(feeds)} live feeds on {accounts} accounts, {opened} open Jetstream connections: "
          f"CPU {cpu:.2f} % over {seconds:.0f} s ({verdict(cpu <= 1)}, target <= 1 %), RSS {rss:.1f} MiB")


def sides(binary, args):
    latency(binary, args.posts)
    idle(binary, args.accounts, args.idle_seconds)


if __name__ == "__main__":
    sys.exit(live_main(__doc__.splitlines()[0], sides, "posts", (200, 5)))
