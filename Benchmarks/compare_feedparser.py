#!/usr/bin/env python3
"""Compares what feedsync mirrors of a directory of feed files with what feedparser reads of them.

    python3 Benchmarks/compare_feedparser.py                    # feedparser's own tests + Fixtures/webfeed
    python3 Benchmarks/compare_feedparser.py DIR [DIR…]         # any folders of feed files
    python3 Benchmarks/compare_feedparser.py --list-failures    # and every feed that falls short, with why

Every file is served on loopback by a small server in this process, with a strong `ETag` and a
`Last-Modified` (and the `Header: Name: value` lines a feedparser test file carries in its
comment, such as its `Content-type` with a charset), answering `304` to a conditional request
that matches. Then:

- feedparser (pinned, in Benchmarks/.venv-feedparser) reads each file from that server;
- `feedsync pull` mirrors all of them, one web feed per file, into a temporary SQLite store, and
  pulls again, which should cost one `304` per feed.

The corpus is the feeds feedparser can read: those it reads with `bozo` 0 and recognises as a
feed (a version, or at least one entry), and the files of its `encoding` tests it reads entries
from even when it flags them. With `--include-bozo`, every file it reads an entry from.

Per feed it reports whether the post counts are equal, the share of feedparser's entries that
feedsync has (matched by title, else by link, else by id) with the same date (to the second; an entry
feedparser dates no more than feedsync does matches on title or link alone), and whether the
second pull was answered `304`. The totals at the end are the figures Benchmarks/README.md quotes.

feedparser's tests come from its sdist on PyPI (`pip download --no-binary :all:`), unpacked in
Benchmarks/.feedparser-tests the first time. Standard library here; feedparser only in its venv.
"""
import argparse
import calendar
import hashlib
import html
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urljoin

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchkit  # noqa: E402
from benchkit import BENCH, ROOT, Broken  # noqa: E402

FEEDPARSER = "feedparser"
FEEDPARSER_VERSION = "6.0.11"
VENV = BENCH / ".venv-feedparser"
TESTS = BENCH / ".feedparser-tests"
OUR_FIXTURES = ROOT / "Fixtures" / "webfeed" / "feeds"
# Files that are not feeds to compare: a refusal test, an HTML page, files feedparser's own
# runner never parses as feeds.
SKIP_NAMES = {"billion-laughs.xml", "not-a-feed.html"}
FEED_SUFFIXES = {".xml", ".rdf", ".rss", ".atom", ".json", ".opml"}
HEADER = re.compile(rb"^Header:\s+([^:\r\n]+):(.+)$", re.MULTILINE)


def note(message):
    print(f"compare-feedparser: {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# The corpus

def feedparser_tests(python):
    """feedparser's tests/ folder from its sdist: wellformed, illformed and encoding feeds."""
    root = TESTS / f"feedparser-{FEEDPARSER_VERSION}" / "tests"
    if root.exists():
        return root
    TESTS.mkdir(parents=True, exist_ok=True)
    note(f"downloading the {FEEDPARSER} {FEEDPARSER_VERSION} sdist from PyPI for its tests …")
    done = subprocess.run([str(python), "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
                           "--no-binary", ":all:", f"{FEEDPARSER}=={FEEDPARSER_VERSION}", "-d", str(TESTS)],
                          capture_output=True, text=True)
    archive = TESTS / f"feedparser-{FEEDPARSER_VERSION}.tar.gz"
    if done.returncode != 0 or not archive.exists():
        raise Broken(f"pip download {FEEDPARSER}=={FEEDPARSER_VERSION} failed\n{benchkit.tail(done.stdout + done.stderr)}")
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if "/tests/" in m.name and (m.isfile() or m.isdir())]
        tar.extractall(TESTS, members=members, filter="data")
    return root


def collect(folders):
    """Every feed file under the folders, as (label, path), in a stable order."""
    files = []
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if not path.is_file() or path.name in SKIP_NAMES or path.suffix.lower() not in FEED_SUFFIXES:
                continue
            # feedparser's http/ and compression/ tests need its own server's behaviour.
            if any(part in ("http", "compression") for part in path.relative_to(folder).parts[:-1]):
                continue
            files.append((f"{folder.name}/{path.relative_to(folder)}", path))
    return files


# ---------------------------------------------------------------------------------------------
# The server: each file at /f/<index>, with validators and the headers its test names

class Served:
    def __init__(self, files):
        self.files = files
        self.log = []                       # (index, status)
        self.lock = threading.Lock()

    def handler(self):
        served = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                match = re.fullmatch(r"/f/(\d+)", self.path)
                if not match or int(match.group(1)) >= len(served.files):
                    self.send_response(404)
                    self.end_headers()
                    return
                index = int(match.group(1))
                body = served.files[index][1].read_bytes()
                headers = {k.strip().decode("latin-1").lower(): v.strip().decode("latin-1") for k, v in HEADER.findall(body)}
                etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
                modified = formatdate(1_700_000_000 + index, usegmt=True)
                fresh = self.headers.get("If-None-Match") == etag or (
                    self.headers.get("If-None-Match") is None and self.headers.get("If-Modified-Since") == modified)
                status = 304 if fresh else 200
                with served.lock:
                    served.log.append((index, status))
                self.send_response(status)
                self.send_header("ETag", etag)
                self.send_header("Last-Modified", modified)
                if status == 304:
                    self.end_headers()
                    return
                self.send_header("Content-Type", headers.get("content-type", "application/xml"))
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
        return Handler


# ---------------------------------------------------------------------------------------------
# The two readers

WORKER = r"""
import calendar, json, sys
import feedparser
for line in sys.stdin:
    url = line.strip()
    try:
        r = feedparser.parse(url)
    except Exception as e:
        print(json.dumps({"url": url, "error": str(e)})); continue
    def epoch(t): return calendar.timegm(t) if t else None
    print(json.dumps({"url": url, "bozo": int(bool(r.bozo)), "version": r.get("version", ""),
                      "bozo_exception": str(r.get("bozo_exception", ""))[:200],
                      "entries": [{"title": e.get("title"), "link": e.get("link"), "id": e.get("id"),
                                   "date": epoch(e.get("published_parsed") or e.get("updated_parsed"))} for e in r.entries]}))
    sys.stdout.flush()
"""


def read_with_feedparser(python, urls):
    done = subprocess.run([str(python), "-c", WORKER], input="\n".join(urls) + "\n", capture_output=True, text=True)
    if done.returncode != 0:
        raise Broken(f"feedparser worker failed\n{benchkit.tail(done.stderr)}")
    return {row["url"]: row for row in map(json.loads, done.stdout.splitlines())}


def mirror_with_feedsync(binary, folder, feeds):
    """`feedsync pull` of every feed twice; the posts of the first pull, by feed name."""
    config = folder / "feedsync.json"
    config.write_text(json.dumps({
        "store": {"integration": "sqlite", "path": "feeds.sqlite"},
        "daemon": {"concurrency": 8, "maxRequestsPerHost": 8},
        "feeds": [{"name": name, "interval": "1h", "posts": {"integration": "webfeed", "url": url}} for name, url in feeds]}))
    first = subprocess.run([str(binary), "pull", "--config", str(config)], capture_output=True, text=True, cwd=folder)
    # Kept for a look afterwards (with --keep): every failed feed's sentence, and anything else said.
    (folder / "pull.stderr").write_text(first.stderr)
    if first.returncode < 0:
        raise Broken(f"feedsync pull died of signal {-first.returncode} (its stderr is in pull.stderr, with --keep)")
    errors = {}
    for line in first.stderr.splitlines():
        # feedsync: NAME: reason, one line a failed feed.
        match = re.match(r"(?:feedsync: )?(f\d+): (.*)", line)
        if match:
            errors[match.group(1)] = match.group(2)
    posts = {}
    with benchkit.connect(folder / "feeds.sqlite") as db:
        for feed, id, title, url, created in db.execute("SELECT feed, id, title, url, created_at FROM posts"):
            posts.setdefault(feed, []).append({"id": id, "title": title, "link": url, "date": created / 1000})
    return posts, errors, config


def shown(path):
    """A path as the report names it: relative to the repository when it is inside it."""
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def normalized(text):
    """A title as both sides would show it: markup and references read, white space collapsed."""
    if text is None:
        return None
    text = html.unescape(re.sub(r"<[^>]*>", "", html.unescape(text)))
    text = " ".join(text.split())
    return text or None


# ---------------------------------------------------------------------------------------------

def compare(expected, got, url):
    """(matched entries, entries) for one feed: each of feedparser's entries is matched to a post
    not yet taken, by title, else by link, else by its id, and must carry
    the same date when feedparser has one; in a feed of one entry and one post, an entry with none
    of the three is that post."""
    pool = list(got)
    matched = 0
    missed = []
    for entry in expected:
        title, link = normalized(entry["title"]), entry["link"]
        found = next((p for p in pool if title and normalized(p["title"]) == title), None)
        if found is None:
            found = next((p for p in pool if link and p["link"] == link), None)
        if found is None:
            # feedparser resolves a relative guid against the feed's URL; feedsync keeps it as written.
            found = next((p for p in pool if entry["id"] and entry["id"].strip() in (p["id"], urljoin(url, p["id"]))), None)
        if found is None and not title and not link:
            # An entry with nothing to tell it by (feedparser's tests of one content field) is the
            # post when the feed has just the one.
            if not entry["id"] and len(expected) == 1 and len(got) == 1:
                found = got[0]
        if found is None:
            missed.append(f"not found: {short(entry)}")
            continue
        pool.remove(found)
        if entry["date"] is None or abs(found["date"] - entry["date"]) < 1:
            matched += 1
        else:
            missed.append(f"date {found['date']:.0f} against {short(entry)}")
    return matched, len(expected), missed


def short(entry):
    return json.dumps({k: entry.get(k) for k in ("title", "link", "id", "date")}, ensure_ascii=False)[:200]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path, help="folders of feed files (default: feedparser's tests and Fixtures/webfeed/feeds)")
    parser.add_argument("--binary", type=Path, help="the feedsync binary (default: .build/release, else .build/debug)")
    parser.add_argument("--include-bozo", action="store_true", help="also every feed feedparser flags but reads an entry from")
    parser.add_argument("--keep", type=Path, help="mirror into this folder and keep it (default: a temporary one)")
    parser.add_argument("--list-failures", action="store_true", help="print every feed that falls short")
    args = parser.parse_args()
    try:
        python = benchkit.ensure_venv(VENV, [f"{FEEDPARSER}=={FEEDPARSER_VERSION}"], "import feedparser", say=note)
        folders = args.folders or [feedparser_tests(python), OUR_FIXTURES]
        binary = args.binary.resolve() if args.binary else next((p for p in (ROOT / ".build/release/feedsync", ROOT / ".build/debug/feedsync") if p.exists()), None)
        if binary is None:
            raise Broken("no feedsync binary in .build/release or .build/debug; run swift build first")
        files = collect(folders)
        served = Served(files)
        server = ThreadingHTTPServer(("127.0.0.1", 0), served.handler())
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}"
        urls = [f"{base}/f/{i}" for i in range(len(files))]
        note(f"{len(files)} files; feedparser {FEEDPARSER_VERSION} reads them …")
        read = read_with_feedparser(python, urls)
        corpus = []
        for index, (label, _) in enumerate(files):
            row = read.get(urls[index], {})
            entries = row.get("entries", [])
            in_encoding_tests = "/encoding/" in f"/{label}"
            if row.get("error") or not (row.get("version") or entries):
                continue
            if row.get("bozo") and not (args.include_bozo or in_encoding_tests) or (row.get("bozo") and not entries):
                continue
            corpus.append(index)
        note(f"{len(corpus)} feeds feedparser reads; feedsync pulls them twice ({shown(binary)}) …")
        with tempfile.TemporaryDirectory(prefix="feedsync-compare-") as scratch:
            folder = Path(args.keep or scratch)
            folder.mkdir(parents=True, exist_ok=True)
            started = time.perf_counter()
            posts, errors, config = mirror_with_feedsync(binary, folder, [(f"f{i}", urls[i]) for i in corpus])
            first_wall = time.perf_counter() - started
            with served.lock:
                served.log.clear()
            subprocess.run([str(binary), "pull", "--config", str(config)], capture_output=True, text=True, cwd=folder)
            with served.lock:
                second = {}
                for index, status in served.log:
                    second.setdefault(index, []).append(status)
        server.shutdown()

        rows, total_matched, total_entries, equal_counts, answered_304 = [], 0, 0, 0, 0
        for index in corpus:
            name, label = f"f{index}", files[index][0]
            expected, got = read[urls[index]]["entries"], posts.get(f"f{index}", [])
            matched, entries, missed = compare(expected, got, urls[index])
            counts_equal = len(expected) == len(got)
            was_304 = second.get(index) == [304]
            total_matched, total_entries = total_matched + matched, total_entries + entries
            equal_counts += counts_equal
            answered_304 += was_304
            rows.append((label, len(expected), len(got), matched, entries, was_304, errors.get(name), missed, got))
        share = 100 * total_matched / total_entries if total_entries else 100.0
        print(f"feedsync ({shown(binary)}) against feedparser {FEEDPARSER_VERSION}: {len(corpus)} feeds of "
              f"{len(files)} files ({', '.join(str(f) for f in folders)}); first pull {first_wall:.1f} s")
        print(f"  post counts equal:             {equal_counts} of {len(corpus)} feeds ({100 * equal_counts / max(1, len(corpus)):.1f}%)")
        print(f"  entries matched, dates equal:  {total_matched} of {total_entries} ({share:.1f}%)")
        print(f"  second pull answered 304:      {answered_304} of {len(corpus)} feeds")
        failing = [r for r in rows if r[1] != r[2] or r[3] != r[4] or not r[5]]
        print(f"  feeds short of any of these:   {len(failing)}")
        if args.list_failures:
            for label, want, have, matched, entries, was_304, error, missed, got in failing:
                why = f"feedparser {want} entries, feedsync {have} posts; {matched}/{entries} matched; " \
                      f"{'304' if was_304 else 'no 304'}" + (f"; {error}" if error else "")
                print(f"    {label}: {why}")
                for line in missed[:3]:
                    print(f"      {line}")
                if missed:
                    print(f"      feedsync has: " + "; ".join(short(p) for p in got[:3]))
        return 0
    except Broken as e:
        print(f"compare-feedparser: BROKEN: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
