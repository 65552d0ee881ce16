#!/usr/bin/env python3
"""The live mirror (Mastodon streaming API) against Fixtures/mastodon/server.py.

    python3 Benchmarks/bench_live.py               # builds the release feedsyncd, then both sides
    python3 Benchmarks/bench_live.py --no-build    # use the existing .build/release/feedsyncd
    python3 Benchmarks/bench_live.py --smoke       # 20 statuses, 2 accounts, a short idle window

Sides:
  latency   one streaming feed (interval 1 h, so only the stream can deliver): --statuses statuses
            published one by one through /_control/post; for each, the time from just before
            the publish request to the moment its row is in the SQLite file (polled every 1 ms
            from here). Median and p99; targets < 200 ms and < 1 s.
  idle      feedsyncd with 10 feeds on each of --accounts accounts (one fixture server, token and
            port per account; home, list:1 and eight hashtags: ten streams each), once with
            "stream": true and once polling only (interval 10 min either way, so no poll falls in
            the window): CPU % and RSS over --idle-seconds once every stream has caught up.
            Targets: <= 1 % CPU, RSS under the polling figure + 20 MiB.

Exit status 1 when something is broken (a status never arrived, the daemon died); a missed
target only shows as MISS. Standard library only; the process helpers are benchkit's.
"""
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchkit import ROOT, Daemon, RefServer, arrivals, connect, latency_figures, live_main, sqlite_config, verdict  # noqa: E402

SERVER = ROOT / "Fixtures" / "mastodon" / "server.py"
TIMELINES = ["home", "list:1", "hashtag:swift", "hashtag:sqlite", "hashtag:ios", "hashtag:fediverse",
             "hashtag:opensource", "hashtag:photography", "hashtag:mastodev", "hashtag:buildinpublic"]


def fixture(token, statuses):
    """The fake Mastodon server for one account, as a child that dies with us."""
    return RefServer(statuses, None, [sys.executable, str(SERVER), "--port", "0", "--exit-on-stdin-eof", "--token", token,
                                      "--statuses", str(statuses), "--rate-limit", "100000"])


def latency(binary, statuses):
    server = fixture("tok-0", 40)
    try:
        with tempfile.TemporaryDirectory() as folder:
            config = sqlite_config(folder, [{"name": "live", "interval": "1h", "posts": {
                "integration": "mastodon", "server": server.base_url, "accessTokenEnv": "MASTODON_TOKEN",
                "timeline": "home", "stream": True}}])
            daemon = Daemon(binary, config, {"MASTODON_TOKEN": "tok-0"})
            try:
                daemon.wait_for("live_caught_up", 1, 60)
                with connect(Path(folder) / "feedsync.sqlite", timeout=30) as db:
                    samples = arrivals(db, statuses, lambda n: server.control("POST", "/_control/post?count=1")["ids"][0],
                                       daemon, "status")
                polls = server.control("GET", "/_control/stats")["requests"].get("GET /api/v1/timelines/home", {})
            finally:
                daemon.stop()
    finally:
        server.stop()
    print(f"latency: {len(samples)} statuses published one by one: {latency_figures(samples)}; "
          f"timeline polls in all: {sum(polls.values())} (the catch-up)")


def idle(binary, accounts, seconds):
    servers = [fixture(f"tok-{k}", 100) for k in range(accounts)]
    figures = {}
    try:
        for streaming in (False, True):
            with tempfile.TemporaryDirectory() as folder:
                feeds, env = [], {}
                for k, server in enumerate(servers):
                    env[f"TOKEN_{k}"] = f"tok-{k}"
                    for timeline in TIMELINES:
                        feeds.append({"name": f"a{k}-{timeline.replace(':', '-')}", "interval": "10m", "posts": {
                            "integration": "mastodon", "server": server.base_url, "accessTokenEnv": f"TOKEN_{k}",
                            "timeline": timeline, "stream": streaming}})
                daemon = Daemon(binary, sqlite_config(folder, feeds), env)
                try:
                    daemon.wait_for("sync_done", len(feeds), 300)
                    if streaming:
                        daemon.wait_for("live_caught_up", len(feeds), 300)
                    time.sleep(2)
                    figures[streaming] = daemon.idle_figures(seconds)
                    opened = sum(s.control("GET", "/_control/streams")["open"] for s in servers)
                finally:
                    daemon.stop()
                side = "streaming" if streaming else "polling  "
                print(f"idle {side}: {len(feeds)} feeds on {accounts} accounts, {opened} open streams: "
                      f"CPU {figures[streaming][0]:.2f} % over {seconds:.0f} s, RSS {figures[streaming][1]:.1f} MiB")
    finally:
        for server in servers:
            server.stop()
    cpu, rss = figures[True]
    print(f"idle verdict: CPU {cpu:.2f} % ({verdict(cpu <= 1)}, target <= 1 %); RSS {rss:.1f} MiB vs polling "
          f"{figures[False][1]:.1f} MiB + 20 ({verdict(rss < figures[False][1] + 20)})")


def sides(binary, args):
    latency(binary, args.statuses)
    idle(binary, args.accounts, args.idle_seconds)


if __name__ == "__main__":
    sys.exit(live_main(__doc__.splitlines()[0], sides, "statuses", (200, 10)))
