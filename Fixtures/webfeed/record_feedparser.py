#!/usr/bin/env python3
"""Records what feedparser (the reference Python feed parser) extracts from each fixture feed,
into expected/<file>.json, so the Swift parser tests compare field by field without the network.

    python3 -m venv /tmp/fp && /tmp/fp/bin/pip install feedparser==6.0.14
    /tmp/fp/bin/python Fixtures/webfeed/record_feedparser.py

Each feed is parsed as if fetched from http://fixtures.example/feeds/<file>, the base relative
URLs resolve against when the document sets no xml:base. Only well-formed feeds are recorded
(feedparser also reads broken ones, "bozo"; feedsync refuses them with line and column).
"""
import calendar
import json
import os
import sys

import feedparser

HERE = os.path.dirname(os.path.abspath(__file__))
FEEDS = os.path.join(HERE, "feeds")
EXPECTED = os.path.join(HERE, "expected")
SKIP = {"malformed.xml", "unreadable.xml", "billion-laughs.xml", "not-a-feed.html"}
# feedparser 6.0 (the newest on PyPI) does not read JSON Feed; the Swift tests check those
# fields against the JSON Feed 1.0/1.1 spec directly.


def epoch(parsed):
    return calendar.timegm(parsed) if parsed else None


def record(name):
    with open(os.path.join(FEEDS, name), "rb") as f:
        data = f.read()
    base = "http://fixtures.example/feeds/" + name
    result = feedparser.parse(data, response_headers={"content-location": base, "content-type": "application/xml"})
    if result.bozo:
        raise SystemExit(f"{name}: feedparser calls it malformed: {result.bozo_exception}")
    entries = []
    for e in result.entries:
        content = e.get("content", [{}])[0].get("value") if e.get("content") else e.get("summary")
        entries.append({
            "id": e.get("id"),
            "title": e.get("title"),
            "link": e.get("link"),
            "published": epoch(e.get("published_parsed")),
            "updated": epoch(e.get("updated_parsed")),
            "authors": [a.get("name") or a.get("email") for a in e.get("authors", []) if a.get("name") or a.get("email")],
            "content": content,
            "enclosures": [{"href": x.get("href"), "type": x.get("type"), "length": x.get("length")} for x in e.get("enclosures", [])],
        })
    feed = result.feed
    out = {"version": result.version, "encoding": result.encoding, "title": feed.get("title"), "link": feed.get("link"),
           "entries": entries}
    with open(os.path.join(EXPECTED, name + ".json"), "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False, sort_keys=True)
        f.write("\n")
    print(f"{name}: {result.version}, {len(entries)} entries")


def main():
    os.makedirs(EXPECTED, exist_ok=True)
    names = sys.argv[1:] or sorted(n for n in os.listdir(FEEDS) if n not in SKIP and not n.endswith(".json")
                                   and os.path.isfile(os.path.join(FEEDS, n)))
    for name in names:
        record(name)


if __name__ == "__main__":
    main()
