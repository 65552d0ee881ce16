#!/usr/bin/env python3
"""Opens a synced feedsync store with the real Datasette and checks, through its JSON API,
that posts link to their authors and videos, that the search box works, and that times are
readable. CI runs it after the Swift tests; it needs PyPI once, to install Datasette into a
venv (default .build/datasette-venv).

    python3 Fixtures/datasette/check_datasette.py --feedsync .build/debug/feedsync
"""
import argparse
import contextlib
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATASETTE = "datasette==0.65.1"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ensure_venv(venv):
    python = os.path.join(venv, "bin", "python")
    if os.path.exists(python) and subprocess.run([python, "-c", "import datasette"], capture_output=True).returncode == 0:
        return os.path.join(venv, "bin", "datasette")
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", DATASETTE], check=True)
    return os.path.join(venv, "bin", "datasette")


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
        return json.loads(response.read())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--feedsync", default=os.path.join(ROOT, ".build/debug/feedsync"))
    parser.add_argument("--venv", default=os.path.join(ROOT, ".build/datasette-venv"))
    args = parser.parse_args()
    datasette = ensure_venv(args.venv)
    results = []

    def check(name, ok, detail=""):
        results.append(ok)
        print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"), flush=True)

    with tempfile.TemporaryDirectory() as folder:
        server = subprocess.Popen([sys.executable, os.path.join(ROOT, "Fixtures/reference-api/server.py"), "--port", "0",
                                   "--posts", "800", "--exit-on-stdin-eof"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        port = int(server.stdout.readline().strip().rsplit(":", 1)[1])
        catalog = os.path.join(ROOT, "Fixtures/videos/catalog.json")
        config = os.path.join(folder, "feedsync.json")
        with open(config, "w") as f:
            json.dump({"feeds": [{"name": "home", "posts": {"integration": "httpapi", "baseURL": f"http://127.0.0.1:{port}",
                                                           "username": "demo", "passwordEnv": "FEEDSYNC_PASSWORD", "pageSize": 200},
                                  "videos": {"integration": "mockvideohost", "catalog": catalog}}]}, f)
        pull = subprocess.run([args.feedsync, "pull", "--config", config], env={**os.environ, "FEEDSYNC_PASSWORD": "demo"},
                              capture_output=True, text=True)
        check("feedsync pull", pull.returncode == 0, pull.stderr)
        star = subprocess.run([args.feedsync, "star", "home/p0000007", "--config", config], capture_output=True, text=True)
        check("feedsync star", star.returncode == 0, star.stderr)
        database = os.path.join(folder, "feedsync.sqlite")
        # Closed here, not by the garbage collector at some later moment while Datasette reads.
        with contextlib.closing(sqlite3.connect(database)) as db:
            expected = db.execute("SELECT COUNT(*) FROM posts WHERE text LIKE '%sourdough%'").fetchone()[0]
            linked = db.execute("SELECT COUNT(*) FROM post_videos").fetchone()[0]

        web = free_port()
        serve = subprocess.Popen([datasette, "serve", database, "-p", str(web), "--immutable", database],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                try:
                    get(web, "/-/versions.json")
                    break
                except OSError:
                    time.sleep(0.1)
            tables = {t["name"]: t for t in get(web, "/feedsync.json")["tables"]}
            posts = tables.get("posts", {})
            check("posts has a search box (posts_fts)", posts.get("fts_table") == "posts_fts", posts.get("fts_table"))
            outgoing = {(k["column"], k["other_table"]) for k in posts.get("foreign_keys", {}).get("outgoing", [])}
            check("posts link to their authors", ("author_pk", "users") in outgoing, outgoing)
            video_links = {(k["column"], k["other_table"]) for k in tables.get("post_videos", {}).get("foreign_keys", {}).get("outgoing", [])}
            check("post_videos link posts and videos", {("post_pk", "posts"), ("video_pk", "videos")} <= video_links, video_links)
            found = get(web, "/feedsync/posts.json?_search=sourdough&_shape=objects&_size=max")
            check("?_search= returns the matching posts", found.get("filtered_table_rows_count") == expected and expected > 0,
                  f"{found.get('filtered_table_rows_count')} != {expected}")
            rows = found.get("rows", [])
            check("every match holds the word", rows and all("sourdough" in r["text"].lower() for r in rows))
            check("times are readable", rows and all(len(r.get("created") or "") == 20 and r["created"].endswith("Z") for r in rows),
                  rows[:1])
            check("videos are joinable", linked > 0, linked)
            starred = get(web, "/feedsync/post_state.json?starred_at__notnull=1&_shape=objects")
            check("the starred column shows the star", [(r["feed"], r["post_id"]) for r in starred.get("rows", [])]
                  == [("home", "p0000007")] and all(r.get("starred_at") for r in starred.get("rows", [])), starred.get("rows"))
        finally:
            serve.terminate()
            serve.wait()
            server.stdin.close()
            server.wait()
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
