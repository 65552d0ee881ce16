"""Where a cold sync's CPU goes: one extra run under `perf record -g`, its samples split into parts.

Issue 40 asks each backend's report to say where the time beyond the ceiling goes (decode, map,
store). `bench.py --profile` (the HTTP API side), `bench.py --mastodon --profile` and
`bench_bluesky.py --profile` call `profile` after their timed runs, so the profiled run's own
slowdown never enters a timed figure; so does `bench.py --webfeeds --profile`, for its cold
`feedsync pull` of 1,000 feeds.

Each sample is put in the first part that one of its frames belongs to, read from the sampled
instruction outwards: a `malloc` inside the JSON reader is decoding, an `fdatasync` under
SQLite is storing. The parts:

- decode: the backend's reading of the JSON into its DTOs (`JSONReader`, the response's `body`),
  or of a web feed's XML or JSON Feed into its items (libxml2, `XMLFeedParser`, `JSONFeedParser`);
- map: DTOs into Core's posts (the backend's `Post`/`User` initialisers, HTML and rich text);
- prepare: the store's rows encoded on the fetching task (`prepare`, `PageRows`, `PostColumns`);
- store: everything under SQLite (`libsqlite3`) or the store's own code;
- http: libcurl and the transfer's callbacks;
- other: the Swift runtime's scheduling, the kernel's own, start-up.

glibc and the kernel keep no frame pointers, so some chains stop short of any named frame (a
`malloc`, or a `pwrite` whose caller is lost). Such a sample is shared out among the parts in
the proportions of the named samples of its own thread: the store's thread writes, a fetching
thread decodes and maps. The report says how many samples were shared out this way.

perf is optional: without it (or when the kernel refuses sampling) `profile` returns None and the
report says so. Standard library only.
"""
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

PARTS = ("decode", "map", "prepare", "store", "http", "other")

# Shared by every backend: the store's side and the transfer's.
COMMON = [
    # Not RowBuffer: the store's commit reads the same buffer (withPinned) on its own thread.
    ("prepare", re.compile(r"PageCommitter\w*prepare|8PageRows|11PostColumns|10CopyLines|PostgresSearchWords")),
    ("store", re.compile(r"^sqlite3|SQLiteCache|PostgresStore|^PQ|^pq")),
    ("http", re.compile(r"^curl_|CurlTransfer|CurlTransport|CurlEasySetup|CurlDownloader")),
]
# What each backend's decode and map frames are called (Swift's mangled names hold these words).
BACKENDS = {
    "HTTP API": [
        ("map", re.compile(r"4Core4PostV7HTTPAPI|4Core4UserV7HTTPAPI|4Core8FeedPageV7HTTPAPI")),
        ("decode", re.compile(r"JSONReader|APIFeedResponse|APIChange|APIPost\w*reading")),
    ],
    "Mastodon": [
        ("map", re.compile(r"4Core4PostV8Mastodon|4Core4UserV8Mastodon|Mastodon\w*mapped|HTMLText|PeerTubeWatchLink|Mastodon6webURL")),
        ("decode", re.compile(r"JSONReader|Mastodon\w*TimelineResponse\w*body|Mastodon\w*reading")),
    ],
    "Bluesky": [
        ("map", re.compile(r"4Core4PostV7Bluesky|4Core4UserV7Bluesky|Bluesky\w*RichText|Bluesky\w*EmbedView\w*attachments|Bluesky6webURL"
                           r"|Bluesky\w*Identifier")),
        ("decode", re.compile(r"JSONReader|Bluesky\w*FeedResponse")),
    ],
    "web feeds": [
        # Swift abbreviates a repeated word of the module's name: WebFeedMapping is 0aB7Mapping,
        # FeedText 0B4Text, WebFeedParser 0aB6Parser.
        ("map", re.compile(r"7WebFeed0aB7Mapping|7WebFeed0B4Text|4Core4PostV7WebFeed|HTMLText|NormalizedURL")),
        ("decode", re.compile(r"XMLReader|XMLFeedParser|XMLMending|AttributeScan|7WebFeed0aB6Parser|7WebFeed0aB8Document"
                              r"|7WebFeed0B8Encoding|7WebFeed0B4Date|JSON\w*Parser|JSONReader|^xml|^html")),
    ],
}
# The DSOs whose frames name the part by themselves.
DSO_PARTS = [("store", re.compile(r"libsqlite3|libpq")), ("http", re.compile(r"libcurl")), ("decode", re.compile(r"libxml2"))]


def available():
    return shutil.which("perf") is not None


def profile(backend, argv, env, cwd, cpu_seconds):
    """Runs `argv` once under `perf record -g` and returns {part: (share, seconds)}, the seconds
    being the share of `cpu_seconds` (the timed run's CPU); None without perf or samples."""
    if not available():
        return None
    rules = BACKENDS[backend] + COMMON
    with tempfile.TemporaryDirectory(prefix="cpu-split-") as scratch:
        data = Path(scratch) / "perf.data"
        recorded = subprocess.run(["perf", "record", "-q", "-F", "2000", "-g", "-o", str(data), "--", *map(str, argv)],
                                  env=env, cwd=cwd, capture_output=True, text=True)
        if recorded.returncode != 0 or not data.exists():
            return None
        script = subprocess.run(["perf", "script", "-i", str(data), "-F", "comm,tid,ip,sym,dso"],
                                capture_output=True, text=True, errors="replace")
        if script.returncode != 0:
            return None
    return split(script.stdout, rules, cpu_seconds)


def split(text, rules, cpu_seconds):
    """{part: (share, seconds)} of `perf script` output, with the shared-out share under
    "cut"; None without samples."""
    named = {}                                  # thread -> {part: samples}
    cut = {}                                    # thread -> samples whose chain stops short
    for thread, frames in samples(text):
        part = classify(frames, rules)
        if part is None:
            cut[thread] = cut.get(thread, 0) + 1
        else:
            counts = named.setdefault(thread, dict.fromkeys(PARTS, 0))
            counts[part] += 1
    totals = dict.fromkeys(PARTS, 0.0)
    for thread, counts in named.items():
        whole = sum(counts.values())
        for part in PARTS:
            totals[part] += counts[part] * (1 + cut.get(thread, 0) / whole)
    orphans = sum(n for thread, n in cut.items() if thread not in named)
    totals["other"] += orphans
    total = sum(totals.values())
    if total == 0:
        return None
    result = {part: (totals[part] / total, cpu_seconds * totals[part] / total) for part in PARTS}
    result["cut"] = (sum(cut.values()) / total, 0.0)
    return result


def samples(text):
    """Each sample's thread and frames as (symbol, dso), from the sampled instruction outwards."""
    thread, frames = None, []
    for line in text.splitlines():
        if not line.strip():
            if frames:
                yield thread, frames
            thread, frames = None, []
        elif line[0].isspace():
            # "    7f0c2e1a3b4c symbol+0x1f (/usr/lib/x86_64-linux-gnu/libsqlite3.so.0.8.6)"
            parts = line.split(None, 1)
            rest = parts[1] if len(parts) > 1 else ""
            symbol, _, dso = rest.rpartition(" (")
            frames.append((symbol.split("+0x")[0], dso.rstrip(")")))
        else:
            # "feedsync  5903 ": the thread's name and id.
            thread = line.split()[-1]
    if frames:
        yield thread, frames


# Where a whole chain ends: a sample that reaches one without a named frame is "other".
ROOTS = {"start_thread", "__clone3", "clone3", "clone", "_start", "__libc_start_call_main", "__libc_start_main"}


def classify(frames, rules):
    """The part of the first named frame; "other" for a whole chain without one; None for a
    chain cut short."""
    for symbol, dso in frames:
        for part, pattern in DSO_PARTS:
            if pattern.search(os.path.basename(dso)):
                return part
        for part, pattern in rules:
            if pattern.search(symbol):
                return part
    return "other" if frames[-1][0] in ROOTS else None


def cpu_bound(client_cpu, server_cpu, ceiling_seconds, target):
    """Prints the least wall time the sync's CPU and its server's need on this machine's cores,
    beside the time the target share of the ceiling allows: when it is more, no overlap of
    fetching and storing reaches the target, only less CPU."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    least = (client_cpu + server_cpu) / cores
    allowed = ceiling_seconds / target
    verdict = "more than" if least > allowed else "within"
    print(f"  on {cores} cores, the sync's {client_cpu:.2f} s of CPU and the server's {server_cpu:.2f} s need at least "
          f"{least:.2f} s of wall: {verdict} the {allowed:.2f} s that {target:.0%} of the ceiling allows")


def report(parts, ceiling_seconds, target=None):
    """Prints the split beside the ceiling's time (when it was measured) and, given the target
    share, the time it allows; a line saying why when there is no split."""
    if parts is None:
        print("  where the CPU went: not measured (needs perf and permission to sample)")
        return
    print("  where the CPU went (one more cold sync under perf record -g; seconds are shares of the timed run's CPU):")
    for part in PARTS:
        share, seconds = parts[part]
        print(f"    {part:<8} {share:6.1%}  {seconds:5.2f} s")
    print(f"    ({parts['cut'][0]:.0%} of the samples had their chain cut short and were shared out by thread)")
    if ceiling_seconds is None:
        return
    print(f"    the ceiling fetched and decoded the same pages in {ceiling_seconds:.2f} s of wall")
    if target:
        print(f"    {target:.0%} of the ceiling allows {ceiling_seconds / target:.2f} s for the whole sync; the store's part, "
              f"on one connection, took {parts['store'][1]:.2f} s of CPU by itself")
