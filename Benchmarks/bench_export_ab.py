#!/usr/bin/env python3
"""Export A/B: `feedsync export` of N posts by two binaries in turn, beside BUSY `yes` processes (issue 40).

    python3 Benchmarks/bench_export_ab.py BEFORE/feedsync AFTER/feedsync 1000000 2 2   # N, busy, rounds

Mirrors N posts of the reference server once (bench_search_export.py's mirror, pulled by AFTER),
then runs `export --output` with BEFORE and AFTER alternately for the rounds given, printing each
run's wall, CPU and peak RSS and whether the two outputs are identical byte for byte.
"""
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchkit  # noqa: E402
from bench_search_export import mirror  # noqa: E402

sides = {"before": sys.argv[1], "after": sys.argv[2]}
n, busy_n, rounds = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
scratch = Path(tempfile.mkdtemp(prefix="feedsync-export-ab-"))
config, db = mirror(Path(sides["after"]), scratch / "export", n, 1000)
print(f"mirror of {n:,} posts ready; load {os.getloadavg()[0]:.1f}", flush=True)
busy = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(busy_n)]
try:
    start_load = os.getloadavg()[0]
    for _ in range(rounds):
        for side, binary in sides.items():
            out = scratch / f"{side}.jsonl"
            r = benchkit.checked(benchkit.measure([binary, "export", "--config", str(config), "--output", str(out)]), "export")
            print(f"{side}: {r.wall:.2f} s wall, {r.cpu:.2f} s CPU, peak RSS {r.rss_mib:.1f} MiB, load {os.getloadavg()[0]:.1f}", flush=True)
        print("identical" if filecmp.cmp(scratch / "before.jsonl", scratch / "after.jsonl", shallow=False) else "DIFFERENT", flush=True)
    print(f"load average {start_load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; {busy_n} busy processes")
finally:
    for p in busy:
        p.kill()
        p.wait()
    shutil.rmtree(scratch, ignore_errors=True)
