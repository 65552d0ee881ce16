#!/usr/bin/env python3
"""How long `feedsync add FILE.opml` takes for a subscription list of N outlines.

    python3 Benchmarks/bench_add_opml.py [--outlines 1000] [--runs 5] [--bin .build/release]

Each run starts from the same one-feed config and adds every outline as a web feed entry: one
edit, one check of the new file, one atomic replace. Nothing is fetched (an OPML file is read,
not its feeds), so the figure is feedsync's own work. Prints the median and the fastest run.
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outlines", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--bin", default=os.path.join(HERE, "..", ".build", "debug"))
    args = parser.parse_args()
    binary = os.path.join(args.bin, "feedsync")
    with tempfile.TemporaryDirectory() as folder:
        opml = os.path.join(folder, "subscriptions.opml")
        with open(opml, "w") as f:
            f.write('<?xml version="1.0"?>\n<opml version="2.0"><head><title>Mine</title></head><body>\n')
            for n in range(args.outlines):
                f.write(f'<outline type="rss" text="Blog {n % 400}" xmlUrl="https://blog{n}.example.org/feed.xml"/>\n')
            f.write("</body></opml>\n")
        config = os.path.join(folder, "feedsync.json")
        original = ('{"store": {"integration": "sqlite", "path": "feedsync.sqlite"},\n "feeds": [\n'
                    '  {"name": "first", "posts": {"integration": "webfeed", "url": "https://example.org/feed.xml"}}\n ]}\n')
        times = []
        for _ in range(args.runs):
            with open(config, "w") as f:
                f.write(original)
            started = time.monotonic()
            result = subprocess.run([binary, "add", opml, "--config", config], capture_output=True, text=True)
            times.append(time.monotonic() - started)
            if result.returncode != 0:
                raise SystemExit(f"feedsync add failed ({result.returncode}): {result.stderr}")
        print(f"{args.outlines} outlines: median {statistics.median(times):.3f} s, fastest {min(times):.3f} s "
              f"over {args.runs} runs ({result.stdout.strip()})")


if __name__ == "__main__":
    main()
