#!/usr/bin/env python3
"""A Google Reader API client written from the API's documentation (FreshRSS's and Miniflux's
pages on it) in the order NetNewsWire's ReaderAPI account calls it: ClientLogin, token, tag and
subscription lists, item ids (unread, starred, all; with continuation), contents in batches,
then edit-tag and mark-all-as-read. It prints what it saw as one JSON object, for the tests.

    python3 greader_client.py --base http://127.0.0.1:PORT --user ada --password-file F \
        [--page 3] [--mark-read ID...] [--star ID...] [--unstar ID...] [--mark-all FEED]
"""
import argparse
import json
import sys
import urllib.error
import urllib.parse
import urllib.request


class Client:
    def __init__(self, base):
        self.base = base.rstrip("/")
        self.auth = None
        self.token = None

    def call(self, method, path, query=None, form=None):
        url = self.base + path + ("?" + urllib.parse.urlencode(query, doseq=True) if query else "")
        data = urllib.parse.urlencode(form, doseq=True).encode() if form is not None else None
        request = urllib.request.Request(url, data=data, method=method)
        if self.auth:
            request.add_header("Authorization", "GoogleLogin auth=" + self.auth)
        if data is not None:
            request.add_header("Content-Type", "application/x-www-form-urlencoded")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, response.read().decode(), dict(response.headers)
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(), dict(error.headers)

    def login(self, user, password):
        status, body, _ = self.call("POST", "/accounts/ClientLogin", form={"Email": user, "Passwd": password})
        if status != 200:
            raise SystemExit(f"ClientLogin: {status} {body.strip()}")
        self.auth = dict(line.split("=", 1) for line in body.splitlines() if "=" in line)["Auth"]
        status, self.token, _ = self.call("GET", "/reader/api/0/token")
        if status != 200:
            raise SystemExit(f"token: {status}")

    def json(self, path, query=None, form=None):
        status, body, _ = self.call("POST" if form is not None else "GET", path, dict(query or {}, output="json"), form)
        if status != 200:
            raise SystemExit(f"{path}: {status} {body.strip()}")
        return json.loads(body)

    def ids(self, query, page):
        """Every id of a stream, following continuations `page` at a time."""
        found, continuation, pages = [], None, 0
        while True:
            q = dict(query, n=page)
            if continuation:
                q["c"] = continuation
            answer = self.json("/reader/api/0/stream/items/ids", q)
            found += [ref["id"] for ref in answer["itemRefs"]]
            pages += 1
            continuation = answer.get("continuation")
            if not continuation or pages > 10000:
                return found, pages

    def contents(self, ids, batch=100):
        items = []
        for start in range(0, len(ids), batch):
            answer = self.json("/reader/api/0/stream/items/contents", form={"i": ids[start:start + batch]})
            items += answer["items"]
        return items

    def edit(self, ids, add=None, remove=None):
        form = {"i": ids, "T": self.token}
        if add:
            form["a"] = add
        if remove:
            form["r"] = remove
        return self.call("POST", "/reader/api/0/edit-tag", form=form)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password-file", required=True)
    parser.add_argument("--page", type=int, default=1000)
    parser.add_argument("--mark-read", nargs="*", default=[])
    parser.add_argument("--star", nargs="*", default=[])
    parser.add_argument("--unstar", nargs="*", default=[])
    parser.add_argument("--mark-all", default=None)
    args = parser.parse_args()
    with open(args.password_file) as f:
        password = f.read().strip()

    client = Client(args.base)
    client.login(args.user, password)
    seen = {"token_length": len(client.token)}
    seen["user"] = client.json("/reader/api/0/user-info")["userName"]
    seen["tags"] = [tag["id"] for tag in client.json("/reader/api/0/tag/list")["tags"]]
    seen["subscriptions"] = [s["id"] for s in client.json("/reader/api/0/subscription/list")["subscriptions"]]
    reading = "user/-/state/com.google/reading-list"
    all_ids, seen["pages"] = client.ids({"s": reading}, args.page)
    unread_ids, _ = client.ids({"s": reading, "xt": "user/-/state/com.google/read"}, args.page)
    starred_ids, _ = client.ids({"s": "user/-/state/com.google/starred"}, args.page)
    seen["all"], seen["unread"], seen["starred"] = all_ids, unread_ids, starred_ids
    items = client.contents(all_ids)
    seen["items"] = [{"id": item["id"], "title": item["title"], "feed": item["origin"]["streamId"],
                      "read": "user/-/state/com.google/read" in item["categories"],
                      "starred": "user/-/state/com.google/starred" in item["categories"]} for item in items]
    counts = client.json("/reader/api/0/unread-count")["unreadcounts"]
    seen["unread_counts"] = {c["id"]: c["count"] for c in counts}
    edits = []
    if args.mark_read:
        edits.append(client.edit(args.mark_read, add="user/-/state/com.google/read")[:2])
    if args.star:
        edits.append(client.edit(args.star, add="user/-/state/com.google/starred")[:2])
    if args.unstar:
        edits.append(client.edit(args.unstar, remove="user/-/state/com.google/starred")[:2])
    if args.mark_all:
        status, body, _ = client.call("POST", "/reader/api/0/mark-all-as-read", form={"s": args.mark_all, "T": client.token})
        edits.append((status, body))
    seen["edits"] = edits
    json.dump(seen, sys.stdout)


if __name__ == "__main__":
    main()
