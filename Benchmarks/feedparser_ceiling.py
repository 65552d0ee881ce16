#!/usr/bin/env python3
"""The web feeds' ceiling: every feed of a list downloaded and parsed by feedparser, one process.

    .venv-webfeeds/bin/python Benchmarks/feedparser_ceiling.py URLS_FILE

URLS_FILE holds one http://127.0.0.1:PORT/... URL a line. Each port gets one keep-alive
connection (http.client); each feed is read whole and given to feedparser.parse, one after
another. Prints {"seconds", "feeds", "entries", "body_bytes"}; the clock runs from the first
request to the last parse, so interpreter start-up and feedparser's import are not charged.
Run with the interpreter of a venv that has feedparser (bench_webfeeds.py uses feed-to-sqlite's,
which depends on it).
"""
import http.client
import json
import sys
import time
from urllib.parse import urlsplit

import feedparser


def main():
    urls = [line.strip() for line in open(sys.argv[1]) if line.strip()]
    connections, entries, total = {}, 0, 0
    started = time.perf_counter()
    for url in urls:
        parts = urlsplit(url)
        conn = connections.get(parts.port) or connections.setdefault(parts.port, http.client.HTTPConnection("127.0.0.1", parts.port, timeout=60))
        conn.request("GET", parts.path)
        response = conn.getresponse()
        body = response.read()
        if response.status != 200:
            raise SystemExit(f"feedparser_ceiling: {url} answered {response.status}")
        total += len(body)
        entries += len(feedparser.parse(body).entries)
    seconds = time.perf_counter() - started
    json.dump({"seconds": seconds, "feeds": len(urls), "entries": entries, "body_bytes": total}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
