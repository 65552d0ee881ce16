#!/usr/bin/env python3
"""mastodon-to-sqlite 0.2.1's own `statuses` command, pointed at the home timeline of a loopback server.

mastodon-to-sqlite (the dogsheep-style tool on PyPI) has no home-timeline command, and its client
hardcodes `https://{domain}/api/v1`. This wrapper changes exactly two things and nothing else:

- the client's base URL becomes `http://{domain}/api/v1` (the fake server is plain HTTP on loopback);
- the path its `statuses` command pages through becomes `timelines/home` with `limit=40` (the
  package pages `accounts/{id}/statuses` the same way, with the same limit).

Everything else is the package's: its click command, `requests` session, Link-header pagination,
`verify_credentials` call, database schema with FTS triggers, and `sqlite-utils` upserts page by page.

    python Benchmarks/mastodon_to_sqlite_home.py DB_PATH --auth auth.json

where auth.json holds {"mastodon_domain": "127.0.0.1:PORT", "mastodon_access_token": "…"}. Needs
mastodon-to-sqlite==0.2.1 (bench.py installs it into Benchmarks/.venv).
"""
import sys

from mastodon_to_sqlite import cli, client

_package_init = client.MastodonClient.__init__


def _init_over_http(self, domain, access_token):
    _package_init(self, domain, access_token)
    self.api_url = f"http://{domain}/api/v1"


def _home_timeline(self, account_id):
    # Same shape as the package's accounts_statuses(), with the home timeline's path.
    return self.request_paginated("GET", "timelines/home", params={"limit": "40"})


client.MastodonClient.__init__ = _init_over_http
client.MastodonClient.accounts_statuses = _home_timeline

if __name__ == "__main__":
    sys.exit(cli.cli(["statuses", *sys.argv[1:]], prog_name="mastodon-to-sqlite"))
