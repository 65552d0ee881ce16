#!/usr/bin/env python3
"""PostgreSQL's cold sync with the server's side of issue 40's options, each beside the others
and beside SQLite, in one run (the options as schema changes made before the pull; feedsync's
own statements unchanged):

- baseline: the schema as the migrations make it;
- gin-off: the search index without its pending list (`fastupdate = off`: each row's entries go
  straight into the GIN tree);
- gin-page: the pending list sized for about one page (`gin_pending_list_limit = 256` kB; the
  server's default is 4 MB and `fastupdate` on);
- no-gin: the search vector kept, its GIN index dropped: what indexing the vector costs (since
  migration 022 the store writes the vector itself, so a variant without the column, which
  measured what making it cost, cannot run any more);
- no-created: without the generated `created` timestamp column;
- no-row-trigger: without the `feed_versions` trigger that runs once per post row (an upsert of
  the feed's counter each time): the most a once-per-statement counter could save;
- link-keys: the video links' foreign keys that migration 023 dropped, put back: what their
  per-row checks cost;
- indexes-after: posts' secondary indexes (time, author, search) dropped during the first walk
  and built after it, the build counted in the time.

    python3 Benchmarks/bench_postgres_options.py BINARY [--posts 100000] [--page-size 500] [--rounds 1]

Prints each variant's wall time, the server's CPU, and its ratio to SQLite's cold sync of the same
posts run just before it. Standard library only; needs the `postgresql` package.
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchkit  # noqa: E402
from bench_postgres import Postgres, config  # noqa: E402
from benchkit import Broken, checked, measure  # noqa: E402

VARIANTS = {
    "baseline": ([], []),
    "gin-off": (["ALTER INDEX posts_search SET (fastupdate = off)"], []),
    "gin-page": (["ALTER INDEX posts_search SET (fastupdate = on, gin_pending_list_limit = 256)"], []),
    "no-row-trigger": (["DROP TRIGGER IF EXISTS feed_version_posts ON posts"], []),
    "no-gin": (["DROP INDEX posts_search"], []),
    "no-created": (["ALTER TABLE posts DROP COLUMN created"], []),
    "link-keys": (["ALTER TABLE post_videos ADD FOREIGN KEY (post_pk) REFERENCES posts (pk) ON DELETE CASCADE",
                   "ALTER TABLE post_videos ADD FOREIGN KEY (video_pk) REFERENCES videos (pk)"], []),
    "indexes-after": (["DROP INDEX posts_search", "DROP INDEX posts_by_author", "DROP INDEX posts_by_time"],
                      ["CREATE INDEX posts_by_time ON posts (feed, created_at DESC, id)",
                       "CREATE INDEX posts_by_author ON posts (author_pk)",
                       "CREATE INDEX posts_search ON posts USING GIN (search)"]),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("--posts", type=int, default=100_000)
    parser.add_argument("--page-size", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    args = parser.parse_args()
    binary = str(Path(args.binary).resolve())
    env = {**os.environ, "FEEDSYNC_PASSWORD": benchkit.PASSWORD}
    scratch = Path(tempfile.mkdtemp(prefix="feedsync-pg-options-"))
    os.chmod(scratch, 0o755)  # the server runs as postgres
    server = benchkit.RefServer(args.posts, args.page_size)
    pg = Postgres(scratch / "pg")
    ratios = {name: [] for name in args.variants.split(",")}
    try:
        for round_ in range(args.rounds):
            folder = scratch / f"round{round_}"
            folder.mkdir()
            for name in ratios:
                # SQLite's cold sync of the same posts just before each variant: on a busy
                # machine a ratio means something only between neighbours.
                sqlite_config = config(folder / f"{name}.sqlite.json", {"integration": "sqlite", "path": str(folder / f"{name}.sqlite")},
                                       ["bench"], server, args.page_size)
                run = checked(measure([binary, "pull", "--config", sqlite_config], env=env, server=server), "pull (SQLite)")
                benchkit.verify_count(folder / f"{name}.sqlite", args.posts, "SQLite cold sync")
                sqlite_wall = run.wall
                before, after = VARIANTS[name]
                database = f"{name.replace('-', '_')}{round_}"
                url = pg.create_database(database)
                pg_config = config(folder / f"{database}.json", {"integration": "postgres", "url": url}, ["bench"], server, args.page_size)
                # The schema first (no posts), then the variant's change, then the timed pull.
                checked(measure([binary, "status", "--config", pg_config], env=env), "status (makes the schema)")
                for statement in before:
                    pg.sql(database, statement)
                cpu, children = pg.cpu_seconds(), pg.children()
                run = checked(measure([binary, "pull", "--config", pg_config], env=env, server=server), f"pull ({name})")
                wall = run.wall
                if after:
                    started = time.perf_counter()
                    for statement in after:
                        pg.sql(database, statement)
                    wall += time.perf_counter() - started
                server_cpu = pg.cpu_seconds(settled_from=children) - cpu
                got = int(pg.sql(database, "SELECT count(*) FROM posts"))
                if got != args.posts:
                    raise Broken(f"{name}: posts holds {got} rows, expected {args.posts}")
                ratios[name].append(wall / sqlite_wall)
                print(f"round {round_ + 1}: {name}: {wall:.2f} s wall beside SQLite's {sqlite_wall:.2f} s ({wall / sqlite_wall:.2f}x), "
                      f"server CPU {server_cpu:.2f} s, feedsync CPU {run.cpu:.2f} s, load {os.getloadavg()[0]:.1f}", flush=True)
                pg.tool("dropdb", "-h", pg.folder, "-U", "postgres", "--force", database)
            shutil.rmtree(folder, ignore_errors=True)
        for name, values in ratios.items():
            print(f"{name}: median {statistics.median(values):.2f}x SQLite over {len(values)} round(s): "
                  + ", ".join(f"{v:.2f}" for v in values))
        return 0
    finally:
        pg.stop()
        server.stop()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
