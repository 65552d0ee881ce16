#!/usr/bin/env python3
"""The rules side of bench.py (issue 38's targets), run with `python3 Benchmarks/bench.py --rules`:

  1. a cold sync of 100,000 posts with 50 rules, against the same sync with none (target: at most
     10% slower). The rules block none of the reference server's posts, so both write the same rows;
  2. `feedsync rules apply` over 1,000,000 stored posts (target: under 30 s): the cold-synced
     100,000 posts copied nine times in SQL (new ids, the search index kept by its triggers);
  3. feedsyncd syncing 1,000 web feeds with a webhook whose receiver answers each delivery after
     1 s, against the same daemon with none (target: the sync rate within 5%).

A benchmark reports figures; it fails (exit 1) only when something is broken (a wrong row count).
"""
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import benchkit
from benchkit import (PASSWORD, ROOT, Broken, Daemon, FeedServer, RefServer, checked, count_posts, load_average, measure,
                      note, reference_config, verify_count, verdict)

TARGET_RULES_SLOWDOWN = 1.10
TARGET_APPLY_SECONDS = 30.0
TARGET_WEBHOOK_RATE = 0.95
RECEIVER = ROOT / "Fixtures" / "webhooks" / "receiver.py"
HOOK_SECRET = "bench-hook-secret-5Tg8"


def fifty_rules():
    """50 rules of every kind a config holds, none of which matches a reference-server post, so
    every post is asked every rule (a keep would stop the walk early)."""
    rules = []
    for i in range(20):
        rules.append({"block": {"text": [f"zqxj{i}", f"vwkp {i}"]}})
    for i in range(10):
        rules.append({"block": {"text": {"regex": f"qz{i}[0-9]+x|^nevermatch{i}$"}}})
    for i in range(5):
        rules.append({"block": {"title": {"regex": f"zz{i}(a|b)yy"}}})
    for i in range(5):
        rules.append({"block": {"author": [f"@nobody{i}@nowhere.example", f"no-such-id-{i}"]}})
    for i in range(5):
        rules.append({"block": {"tag": [f"notatag{i}"]}})
    for i in range(5):
        rules.append({"block": {"language": [f"x{i}"], "kind": "reply"}})
    return rules


def with_rules(config, rules):
    data = json.loads(Path(config).read_text())
    data["feeds"][0]["rules"] = rules
    Path(config).write_text(json.dumps(data, indent=2) + "\n")


def cold(binary, server, page_size, scratch, rules, attempt):
    folder = Path(tempfile.mkdtemp(prefix=f"rules-{len(rules)}-{attempt}-", dir=scratch))
    config, db = reference_config(folder, server, page_size)
    if rules:
        with_rules(config, rules)
    run = checked(measure([binary, "pull", "--config", config], env={**os.environ, "FEEDSYNC_PASSWORD": PASSWORD}, server=server),
                  f"feedsync pull with {len(rules)} rules")
    verify_count(db, server.posts, f"cold sync with {len(rules)} rules")
    return run, config, db


def multiply(db, times):
    """Copies every post of `db` `times - 1` times under new ids (`<id>-<n>`), in one transaction."""
    with benchkit.connect(db) as conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(posts)") if row[1] != "pk"]
        last = conn.execute("SELECT MAX(pk) FROM posts").fetchone()[0]
        for n in range(1, times):
            chosen = ", ".join(f"id || '-{n}'" if c == "id" else c for c in columns)
            conn.execute(f"INSERT INTO posts ({', '.join(columns)}) SELECT {chosen} FROM posts WHERE pk <= ?", (last,))


def receiver(delay):
    import subprocess
    proc = subprocess.Popen([sys.executable, str(RECEIVER), "--port", "0", "--secret", HOOK_SECRET, "--delay", str(delay),
                             "--exit-on-stdin-eof"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline().strip()
    if not line.startswith("listening on 127.0.0.1:"):
        proc.kill()
        raise Broken(f"the webhook receiver did not start: {line!r}")
    return proc, int(line.rsplit(":", 1)[1])


def daemon_round(bin_dir, server, folder, hook_port):
    """Seconds until feedsyncd has synced every feed once, and the deliveries still queued then."""
    import bench_webfeeds
    config, db = bench_webfeeds.write_config(folder, server)
    if hook_port:
        data = json.loads(config.read_text())
        data["webhooks"] = [{"url": f"http://127.0.0.1:{hook_port}/hook", "secretEnv": "HOOK_SECRET", "events": ["new"]}]
        config.write_text(json.dumps(data, indent=1))
    daemon = Daemon(bin_dir / "feedsyncd", config, env={"HOOK_SECRET": HOOK_SECRET})
    try:
        seconds = daemon.wait_for("sync_done", server.feeds, timeout=1200)
        with benchkit.connect(db) as conn:
            queued = conn.execute("SELECT COUNT(*) FROM webhook_deliveries").fetchone()[0]
    finally:
        daemon.stop()
    if count_posts(db) != server.feeds * server.items:
        raise Broken(f"feedsyncd stored {count_posts(db)} posts, expected {server.feeds * server.items}")
    return seconds, queued


def run(binary, posts=100_000, page_size=500, feeds=1000, items=20, repeat=1, scratch=None):
    scratch = Path(scratch or tempfile.mkdtemp(prefix="feedsync-bench-rules-"))
    scratch.mkdir(parents=True, exist_ok=True)
    rules = fifty_rules()
    lines = Report()
    lines.append(f"## Rules and webhooks (issue 38); load average at the start {load_average()}")

    note(f"starting the reference server with {posts:,} posts …")
    server = RefServer(posts, page_size)
    try:
        best = {}
        for attempt in range(repeat):
            for label, given in (("none", []), ("50 rules", rules)):
                note(f"cold sync of {posts:,} posts with {label} (round {attempt + 1}) …")
                result, config, db = cold(binary, server, page_size, scratch, given, attempt)
                if label not in best or result.wall < best[label][0].wall:
                    best[label] = (result, config, db)
    finally:
        server.stop()
    none, ruled = best["none"][0].wall, best["50 rules"][0].wall
    ratio = ruled / none
    lines.append(f"cold sync of {posts:,} posts, best of {repeat}: no rules {none:.2f} s, 50 rules {ruled:.2f} s: "
                 f"{ratio:.3f}x (target <= {TARGET_RULES_SLOWDOWN:.2f}x) {verdict(ratio <= TARGET_RULES_SLOWDOWN)}")

    _, config, db = best["50 rules"]
    note("copying the stored posts to 1,000,000 …")
    multiply(db, 10)
    stored = count_posts(db)
    # One rule more that blocks what one author wrote: the apply has something to remove.
    data = json.loads(Path(config).read_text())
    with benchkit.connect(db) as conn:
        author = conn.execute("SELECT author_id FROM posts GROUP BY author_id ORDER BY COUNT(*) LIMIT 1").fetchone()[0]
    data["feeds"][0]["rules"] = [{"block": {"author": author}}] + rules
    Path(config).write_text(json.dumps(data, indent=2) + "\n")
    env = {**os.environ, "FEEDSYNC_PASSWORD": PASSWORD}
    note(f"feedsync rules apply --dry-run over {stored:,} posts …")
    dry = checked(measure([binary, "rules", "apply", "--dry-run", "--config", config], env=env), "rules apply --dry-run")
    note(f"feedsync rules apply over {stored:,} posts …")
    applied = checked(measure([binary, "rules", "apply", "--config", config], env=env), "rules apply")
    removed = stored - count_posts(db)
    lines.append(f"rules apply over {stored:,} stored posts, 51 rules: --dry-run {dry.wall:.2f} s; applied {applied.wall:.2f} s, "
                 f"removed {removed:,} (target < {TARGET_APPLY_SECONDS:.0f} s) {verdict(max(dry.wall, applied.wall) < TARGET_APPLY_SECONDS)}")

    note(f"starting the feed server: {feeds:,} feeds of {items} items, and a receiver that answers in 1 s …")
    feed_server = FeedServer(feeds, items, 20)
    hook, hook_port = receiver(1.0)
    try:
        rounds = {}
        for attempt in range(repeat):
            for label, port in (("none", None), ("webhook", hook_port)):
                note(f"feedsyncd, {feeds:,} feeds, {label} (round {attempt + 1}) …")
                seconds, queued = daemon_round(binary.parent, feed_server, scratch / f"daemon-{label}-{attempt}", port)
                if label not in rounds or seconds < rounds[label][0]:
                    rounds[label] = (seconds, queued)
    finally:
        feed_server.stop()
        hook.stdin.close()
        hook.wait(10)
    (plain, _), (hooked, queued) = rounds["none"], rounds["webhook"]
    rate = (feeds / hooked) / (feeds / plain)
    lines.append(f"feedsyncd syncing {feeds:,} feeds of {items} items, best of {repeat}: no webhook {feeds / plain:.1f} feeds/s "
                 f"({plain:.2f} s), a webhook answering in 1 s {feeds / hooked:.1f} feeds/s ({hooked:.2f} s), {queued:,} deliveries "
                 f"still queued then: rate {rate:.3f} of none's (target >= {TARGET_WEBHOOK_RATE:.2f}) {verdict(rate >= TARGET_WEBHOOK_RATE)}")
    lines.append(f"load average at the end {load_average()}")


class Report(list):
    """The report's lines, each printed as soon as it is measured (a long side shows what it has)."""

    def append(self, line):
        super().append(line)
        print(line, flush=True)
