#!/usr/bin/env python3
"""The media archive's benchmark (issue 37), run by `bench.py --media`:

1. N images of B bytes from H loopback hosts (ports of Fixtures/media/server.py): `feedsync media
   fetch` against `curl --parallel` with the same concurrency over the same URLs, and the fetch's
   peak RSS above that of `feedsync media status` (the same process fetching nothing); with
   `baseline`, another build's feedsync (a folder with its binary) fetches the same URLs in the
   same run, for a before/after; each side's TCP connections are counted by the server;
2. a resumed 1 GB file (bytes cheap to make: the fixture's Pattern): the server cuts the first answer at half, and the second fetch must
   bring only the missing bytes (counted by the server).
"""
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchkit import TICK, Broken, checked, cpu_ticks, measure, note

SERVER = Path(__file__).resolve().parent.parent / "Fixtures/media/server.py"


def start_server(hosts, image_bytes, audio_bytes):
    proc = subprocess.Popen([sys.executable, str(SERVER), "--port", "0", "--extra-ports", str(hosts - 1), "--image-bytes", str(image_bytes),
                             "--audio-bytes", str(audio_bytes)], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    ports = [int(proc.stdout.readline().strip().rsplit(":", 1)[1]) for _ in range(hosts)]
    return proc, ports


def post(port, path, body):
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("POST", path, body=body)
    answer = conn.getresponse().read()
    conn.close()
    return answer


def stats(port):
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", "/_control/stats")
    answer = json.loads(conn.getresponse().read())
    conn.close()
    return answer


def config(folder, port, concurrency):
    path = folder / "feedsync.json"
    path.write_text(json.dumps({"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
                                "feeds": [{"name": "m", "posts": {"integration": "webfeed", "url": f"http://127.0.0.1:{port}/feed.xml"}}],
                                "media": {"path": "media", "concurrency": concurrency}}))
    return path


def fetch_images(feedsync, folder, port, concurrency, images, server):
    """(fetch, idle, connections, server CPU s): `feedsync media fetch` of every image into `folder`,
    `media status` there (the same process fetching nothing), the TCP connections the fetch opened
    and the CPU seconds the server spent meanwhile."""
    cfg = config(folder, port, concurrency)
    checked(measure([feedsync, "pull", "--config", cfg], cwd=folder), "feedsync pull")
    idle = checked(measure([feedsync, "media", "status", "--config", cfg], cwd=folder), "feedsync media status")
    before, ticks = stats(port)["connections"], cpu_ticks(server.pid)
    fetch = checked(measure([feedsync, "media", "fetch", "--config", cfg], cwd=folder), "feedsync media fetch")
    served = (cpu_ticks(server.pid) - ticks) / TICK
    connections = stats(port)["connections"] - before - 1   # the stats request's own
    if f"fetched {images} " not in fetch.stdout:
        raise Broken(f"media fetch did not fetch {images} images: {fetch.stdout} {fetch.stderr[-2000:]}")
    return fetch, idle, connections, served


def run(bin_dir, images=10_000, hosts=50, image_bytes=100_000, concurrency=4, big_bytes=1 << 30, scratch=None, baseline=None):
    feedsync = Path(bin_dir) / "feedsync"
    scratch = Path(scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    proc, ports = start_server(hosts, image_bytes, big_bytes)
    try:
        per_item = 10
        urls = [f"http://127.0.0.1:{ports[i % hosts]}/m/img-{i}.png" for i in range(images)]
        items = [{"id": str(n), "at": n, "media": [{"url": u, "type": "image/png"} for u in urls[n * per_item:(n + 1) * per_item]]}
                 for n in range((images + per_item - 1) // per_item)]
        post(ports[0], "/_control/feed", json.dumps(items))
        mb = images * image_bytes / 1e6
        print(f"media archive: {images} images of {image_bytes} B from {hosts} loopback hosts, concurrency {concurrency}")
        sides = [("feedsync", bin_dir)] + ([("baseline", baseline)] if baseline else [])
        fetched = {}
        for label, binaries in sides:
            folder = scratch / f"images-{label}"
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            fetched[label] = fetch_images(Path(binaries) / "feedsync", folder, ports[0], concurrency, images, proc)
        folder = scratch / "images-curl"
        shutil.rmtree(folder, ignore_errors=True)
        (folder / "curl").mkdir(parents=True)
        listing = folder / "urls.txt"
        listing.write_text("".join(f'url = "{u}"\noutput = "curl/{i}"\n' for i, u in enumerate(urls)))
        before, ticks = stats(ports[0])["connections"], cpu_ticks(proc.pid)
        curl = checked(measure(["curl", "--silent", "--fail", "--parallel", "--parallel-max", str(concurrency), "--config", listing],
                               cwd=folder), "curl --parallel")
        curl_served = (cpu_ticks(proc.pid) - ticks) / TICK
        curl_connections = stats(ports[0])["connections"] - before - 1
        note("media: " + ", ".join(f"{label} {fetch.wall:.2f} s" for label, (fetch, _, _, _) in fetched.items()) + f", curl {curl.wall:.2f} s")
        for label, (fetch, idle, connections, served) in fetched.items():
            name = "feedsync media fetch" if label == "feedsync" else "baseline media fetch"
            print(f"  {name:<21} {fetch.wall:7.2f} s  {images / fetch.wall:8.0f} files/s  {mb / fetch.wall:7.1f} MB/s  "
                  f"{connections} connections  server CPU {served:.1f} s  peak RSS {fetch.rss_mib:.1f} MiB "
                  f"({fetch.rss_mib - idle.rss_mib:+.1f} MiB above `media status`'s {idle.rss_mib:.1f})")
        print(f"  curl --parallel       {curl.wall:7.2f} s  {images / curl.wall:8.0f} files/s  {mb / curl.wall:7.1f} MB/s  "
              f"{curl_connections} connections  server CPU {curl_served:.1f} s")
        for label, (fetch, _, _, _) in fetched.items():
            print(f"  {label + ' / curl':<21} {curl.wall / fetch.wall * 100:6.0f} % of curl's rate")

        if not big_bytes:
            return
        # Resume: the first answer stops at half; the second fetch asks for and gets only the rest.
        post(ports[0], "/_control/feed", json.dumps([{"id": "big", "media": [{"url": "/m/cut-big.mp3", "type": "audio/mpeg"}]}]))
        folder = scratch / "resume"
        folder.mkdir(exist_ok=True)
        cfg = config(folder, ports[0], concurrency)
        cfg.write_text(cfg.read_text().replace('"concurrency"', '"maxItemBytes": "2GB", "concurrency"'))
        checked(measure([feedsync, "pull", "--config", cfg], cwd=folder), "feedsync pull (resume)")
        before = stats(ports[0])["bytes"]
        first = measure([feedsync, "media", "fetch", "--config", cfg], cwd=folder)
        middle = stats(ports[0])["bytes"]
        second = checked(measure([feedsync, "media", "fetch", "--config", cfg], cwd=folder), "feedsync media fetch (resumed)")
        after = stats(ports[0])["bytes"]
        if "fetched 1 " not in second.stdout:
            raise Broken(f"the resumed fetch did not complete: {second.stdout} {second.stderr[-2000:]}")
        print(f"resumed {big_bytes} B file: first attempt got {middle - before} B (cut by the server), "
              f"the resumed one {after - middle} B in {second.wall:.2f} s; ranges asked: {stats(ports[0])['ranges'][-1:]}")
        if middle - before + after - middle != big_bytes:
            raise Broken("the two attempts together did not bring the file's bytes exactly once")
    finally:
        proc.terminate()
        proc.wait()
