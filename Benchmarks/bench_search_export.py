#!/usr/bin/env python3
"""Search latency and export memory, measured on stores synced from the reference server.

    python3 Benchmarks/bench_search_export.py [--posts 100000] [--export-posts 1000000] [--no-build] [--smoke]

- search: `feedsync search` for a known phrase among --posts posts, wall time of the whole
  process (best of 7), and the FTS5 query alone as SQLite runs it (best of 7);
- export: `feedsync export` of --export-posts posts to a file, its wall time, CPU time and peak
  RSS, best of --export-runs runs (CPU time is the figure that a loaded machine disturbs least).

Targets (issues: search, export; #21.5): search under 50 ms; export of 1,000,000 posts under
100 MiB RSS and in at most 10 s.
Standard library only. Reuses benchkit.py's helpers for the server and for measuring a child.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchkit  # noqa: E402  (the shared helpers beside this file)


def mirror(binary, folder, posts, page_size):
    """folder/feedsync.sqlite holding the reference server's `posts`, pulled by `binary`.
    Returns the config's path and the database's."""
    server = benchkit.RefServer(posts, page_size)
    try:
        folder.mkdir()
        config, db = benchkit.reference_config(folder, server, page_size)
        benchkit.pull(binary, config, server, {"FEEDSYNC_PASSWORD": benchkit.PASSWORD})
        benchkit.verify_count(db, posts, "feedsync")
    finally:
        server.stop()
    return config, db


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--posts", type=int, default=100_000)
    parser.add_argument("--export-posts", type=int, default=1_000_000)
    parser.add_argument("--export-runs", type=int, default=3)
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="2,000 posts each, debug build allowed")
    parser.add_argument("--busy", type=int, default=0, metavar="N",
                        help="run N other busy processes (yes > /dev/null) during the export runs (issue 40: 2)")
    args = parser.parse_args()
    if args.smoke:
        args.posts = args.export_posts = 2_000
    if not args.no_build and not args.smoke:
        benchkit.build_release()
    binary, _ = benchkit.pick_binary(args.smoke)
    with tempfile.TemporaryDirectory(prefix="feedsync-search-") as folder:
        scratch = Path(folder)
        config, db = mirror(binary, scratch / "search", args.posts, 500)
        # A known phrase: three words in a row from a post in the middle of the feed.
        with benchkit.connect(db) as connection:
            text = connection.execute("SELECT text FROM posts WHERE id = ?", (f"p{args.posts // 2:07d}",)).fetchone()[0]
        words = "".join(c if c.isalnum() else " " for c in text).split()
        window = words[:3]
        phrase = '"' + " ".join(window) + '"'
        runs = [benchkit.measure([str(binary), "search", phrase, "--config", str(config), "--limit", "20"]) for _ in range(7)]
        for run in runs:
            benchkit.checked(run, "feedsync search")
        wall = min(r.wall for r in runs)
        with benchkit.connect(db) as connection:
            sql = ("SELECT p.id, snippet(posts_fts, -1, '[', ']', '…', 16) FROM posts_fts JOIN posts p ON p.pk = posts_fts.rowid "
                   "WHERE posts_fts MATCH ? ORDER BY bm25(posts_fts) LIMIT 20")
            times = []
            for _ in range(7):
                started = time.perf_counter()
                matches = connection.execute(sql, (phrase,)).fetchall()
                times.append(time.perf_counter() - started)
            total = connection.execute("SELECT COUNT(*) FROM posts_fts WHERE posts_fts MATCH ?", (phrase,)).fetchone()[0]
        print(f"search {phrase} among {args.posts:,} posts: {total:,} matches; "
              f"feedsync search (whole process) {wall * 1000:.1f} ms, the FTS5 query alone {min(times) * 1000:.1f} ms "
              f"(best of 7); target < 50 ms: {'met' if wall < 0.05 else 'MISS'}")
        if not matches:
            raise SystemExit("no match for the known phrase")

        config, db = mirror(binary, scratch / "export", args.export_posts, 1000)
        out = scratch / "export.jsonl"
        runs = []
        busy = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(args.busy)]
        try:
            load = os.getloadavg()[0]
            for _ in range(args.export_runs):
                runs.append(benchkit.checked(benchkit.measure([str(binary), "export", "--config", str(config), "--output", str(out)]),
                                          "feedsync export"))
                lines = sum(1 for _ in open(out, "rb"))
                if lines != args.export_posts:
                    raise SystemExit(f"export wrote {lines} lines, not {args.export_posts}")
            load = f"{load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
        finally:
            for process in busy:
                process.kill()
                process.wait()
        run = min(runs, key=lambda r: r.wall)
        rss = max(r.rss_mib for r in runs)
        print(f"export of {args.export_posts:,} posts (best of {len(runs)}): {run.wall:.2f} s wall, {run.cpu:.2f} s CPU "
              f"(all runs: {', '.join(f'{r.wall:.2f} s wall / {r.cpu:.2f} s CPU' for r in runs)}), peak RSS {rss:.1f} MiB, "
              f"{os.path.getsize(out) / 2**20:.0f} MiB of JSON Lines; target < 100 MiB: {'met' if rss < 100 else 'MISS'}; "
              f"target <= 10 s: {'met' if run.wall <= 10 else 'MISS'}; {args.busy} other busy processes; load average {load}")


if __name__ == "__main__":
    main()
