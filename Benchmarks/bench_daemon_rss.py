#!/usr/bin/env python3
"""Peak RSS of one feedsyncd (SQLite store) with N web feeds, once every feed synced (issue 40).

    python3 Benchmarks/bench_daemon_rss.py .build/release/feedsyncd 10000
    python3 Benchmarks/bench_daemon_rss.py .build/release/feedsyncd 3000 heaptrack -o /tmp/ht   # where it goes
    python3 Benchmarks/bench_daemon_rss.py --scrapes 3 .build/release/feedsyncd 100000   # and /metrics read 3 times

Starts Fixtures/webfeed/server.py with N feeds of 5 items on 8 ports, one OPML entry for them
(interval 1h, daemon.concurrency 32, maxRequestsPerHost 4), runs BINARY (behind the command
given after N, if any) until its log holds N sync_done lines, and prints VmRSS and VmHWM (when
not wrapped). With `--scrapes K`, the daemon also serves `/metrics`, which is then read whole K
times (HTTP/1.1, as Prometheus does); VmHWM is printed before and after. Run it for two binaries in turn to compare. Standard library only.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchkit import FeedServer, status_kib  # noqa: E402

arguments = sys.argv[1:]
scrapes = 0
if arguments[:1] == ["--scrapes"]:
    scrapes, arguments = int(arguments[1]), arguments[2:]
binary, n = Path(arguments[0]), int(arguments[1])
wrapper = arguments[2:]
port = None
if scrapes:
    from bench_cluster import free_port, scrape  # noqa: E402
    port = free_port()
folder = Path(tempfile.mkdtemp(prefix="feedsync-bench-rss-"))
server = FeedServer(n, 5, 8)
outlines = "".join(f'<outline type="rss" text="w{i}" xmlUrl="http://127.0.0.1:{server.ports[i % 8]}/feeds/{i}.xml"/>\n' for i in range(n))
(folder / "w.opml").write_text(f'<?xml version="1.0"?><opml version="2.0"><head><title>w</title></head><body>\n{outlines}</body></opml>\n')
(folder / "feedsync.json").write_text(json.dumps({"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
                                                  "daemon": {"concurrency": 32, "maxRequestsPerHost": 4},
                                                  "feeds": [{"name": "w", "opml": "w.opml", "interval": "1h"}]}
                                                 | ({"metrics": {"listen": f"127.0.0.1:{port}"}} if port else {})))
log = open(folder / "feedsyncd.log", "w+")
proc = subprocess.Popen(wrapper + [str(binary), "--config", str(folder / "feedsync.json")], stdout=log, stderr=log, cwd=folder)
start = time.time()
while True:
    time.sleep(2)
    with open(folder / "feedsyncd.log") as f:
        done = sum(1 for line in f if " event=sync_done " in line)
    if done >= n or time.time() - start > 1200:
        break
if not wrapper:
    print(f"N={n} synced {done} in {time.time() - start:.0f}s VmRSS {status_kib(proc.pid, 'VmRSS') / 1024:.1f} MiB "
          f"VmHWM {status_kib(proc.pid, 'VmHWM') / 1024:.1f} MiB load {os.getloadavg()[0]:.1f}", flush=True)
for round in range(scrapes):
    page = scrape(port)
    print(f"scrape {round + 1}: {page['bytes'] / 1e6:.0f} MB in {page['seconds']:.1f} s, {page['share']:,} syncs counted; "
          f"VmRSS {status_kib(proc.pid, 'VmRSS') / 1024:.1f} MiB VmHWM {status_kib(proc.pid, 'VmHWM') / 1024:.1f} MiB", flush=True)
proc.send_signal(15)
proc.wait(60)
server.stop()
print(f"folder {folder}")
