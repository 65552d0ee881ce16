#!/usr/bin/env python3
"""Export A/B: `feedsync export` of N posts by two binaries in turn, beside BUSY `yes` processes (issue 40).

    python3 Benchmarks/bench_export_ab.py BEFORE/feedsync AFTER/feedsync [--posts 1000000] [--busy 2] [--rounds 5]
                                          [--format jsonl|csv|both] [--mirror DIR]

Mirrors N posts of the reference server once, pulled by BEFORE (so the store has BEFORE's schema),
or reuses the mirror in --mirror DIR (its feedsync.json and feedsync.sqlite, kept when it is made
there). Each side exports from its own copy of the store (AFTER may migrate its copy on its first
run; that run is left out of the figures). Then `export --output` with BEFORE and AFTER alternately,
for each format, for the rounds given, each run's wall, CPU and peak RSS and the load average, then
the medians, and whether the two outputs are identical byte for byte (`cmp`).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchkit  # noqa: E402
from bench_search_export import mirror  # noqa: E402


def copy_store(source_config, folder):
    """A copy of the mirror's store in `folder`, with a config naming it."""
    folder.mkdir()
    source = Path(source_config).parent
    for name in ("feedsync.sqlite", "feedsync.sqlite.sessions.sqlite"):
        if (source / name).exists():
            shutil.copy(source / name, folder / name)
    text = Path(source_config).read_text().replace(str(source / "feedsync.sqlite"), str(folder / "feedsync.sqlite"))
    (folder / "feedsync.json").write_text(text)
    return folder / "feedsync.json"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--posts", type=int, default=1_000_000)
    parser.add_argument("--busy", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--format", choices=["jsonl", "csv", "both"], default="both")
    parser.add_argument("--mirror", help="a folder holding (or to hold) the mirror, kept for the next run")
    args = parser.parse_args()
    sides = {"before": args.before, "after": args.after}
    formats = ["jsonl", "csv"] if args.format == "both" else [args.format]
    scratch = Path(tempfile.mkdtemp(prefix="feedsync-export-ab-"))
    busy = []
    try:
        if args.mirror and (Path(args.mirror) / "feedsync.json").exists():
            config = Path(args.mirror) / "feedsync.json"
        else:
            folder = Path(args.mirror) if args.mirror else scratch / "mirror"
            config, _ = mirror(Path(args.before), folder, args.posts, 1000)
        configs = {side: copy_store(config, scratch / side) for side in sides}
        # A first, unmeasured run each: AFTER applies its migrations, both warm the page cache.
        for side, binary in sides.items():
            benchkit.checked(benchkit.measure([binary, "export", "--config", str(configs[side]), "--output", str(scratch / "warm")]), "export")
        print(f"mirror of {args.posts:,} posts ready; load {os.getloadavg()[0]:.1f}", flush=True)
        busy = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(args.busy)]
        start_load = os.getloadavg()[0]
        runs = {(side, fmt): [] for side in sides for fmt in formats}
        identical = True
        for _ in range(args.rounds):
            for fmt in formats:
                for side, binary in sides.items():
                    out = scratch / f"{side}.{fmt}"
                    r = benchkit.checked(benchkit.measure([binary, "export", "--config", str(configs[side]), "--format", fmt,
                                                           "--output", str(out)]), "export")
                    runs[(side, fmt)].append(r)
                    print(f"{fmt} {side}: {r.wall:.2f} s wall, {r.cpu:.2f} s CPU, peak RSS {r.rss_mib:.1f} MiB, "
                          f"load {os.getloadavg()[0]:.1f}", flush=True)
                same = subprocess.run(["cmp", str(scratch / f"before.{fmt}"), str(scratch / f"after.{fmt}")]).returncode == 0
                identical = identical and same
                print(f"{fmt}: {'identical' if same else 'DIFFERENT'}", flush=True)
        for fmt in formats:
            for side in sides:
                rs = runs[(side, fmt)]
                print(f"median {fmt} {side}: {statistics.median(r.wall for r in rs):.2f} s wall, "
                      f"{statistics.median(r.cpu for r in rs):.2f} s CPU, peak RSS {max(r.rss_mib for r in rs):.1f} MiB "
                      f"({len(rs)} runs)")
        print(f"load average {start_load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; {args.busy} busy processes; "
              f"outputs {'identical byte for byte' if identical else 'DIFFERENT'}")
        return 0 if identical else 1
    finally:
        for p in busy:
            p.kill()
            p.wait()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
