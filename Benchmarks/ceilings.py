"""Every side's share of its ceiling, in one table (issue 40).

Each side that measures a ceiling beside feedsync calls `record` with the same pages' two times:
the ceiling is the fastest any client could fetch and decode them with the reference decoder
(`json.loads`, or feedparser for web feeds) in one process, in the same run; the share is the
ceiling's time over feedsync's (100% means feedsync did everything, storing included, as fast as
the ceiling only fetched and decoded). `bench.py` prints `table()` after the sides it ran.
Standard library only.
"""

ROWS = []
# Issue 40's targets; a backend without one is reported, not judged.
TARGETS = {"Bluesky": 0.80, "Mastodon": 0.80}


def record(backend, items, decoder, feedsync_seconds, ceiling_seconds, note="", floor=None):
    """One backend's figures: items synced, the decoder of its ceiling, both wall times in seconds,
    and SQLite's floor for the same rows as (wall, CPU) seconds when it was measured."""
    ROWS.append((backend, items, decoder, feedsync_seconds, ceiling_seconds, note, floor))


def sqlite_floor(db, page_size, scratch, expected, repeat=1):
    """(wall, CPU) seconds of SQLite alone writing the rows feedsync wrote into `db` into the same
    schema, in transactions as large as feedsync's store makes of pages of `page_size`
    (bench.py's sqlite_floor.c and pages_per_commit), the fastest of `repeat`; or None without a
    C compiler. It shows how far storing alone is from the ceiling."""
    import bench                              # late: bench.py imports the sides that call this
    binary = bench.build_floor(scratch)
    if binary is None:
        return None
    run, = bench.best_of(repeat, lambda: bench.sqlite_floor(binary, db, page_size, scratch, expected))
    return run.wall, run.cpu


def table():
    """The summary, as a Markdown table, or nothing when no side recorded a ceiling."""
    if not ROWS:
        return
    print("\n## Every backend against its ceiling (same pages, same run)\n")
    print("| backend | items | ceiling decoder | ceiling s | feedsync s | feedsync's share of the ceiling | target "
          "| sqlite floor s (its share) |")
    print("|---|---|---|---|---|---|---|---|")
    for backend, items, decoder, mine, ceiling, note, floor in ROWS:
        share = ceiling / mine if mine else 0.0
        target = TARGETS.get(backend)
        verdict = f">= {target:.0%} {'ok' if share >= target else 'MISS'}" if target else "-"
        print(f"| {backend}{f' ({note})' if note else ''} | {items:,} | {decoder} | {ceiling:.2f} | {mine:.2f} | {share:.0%} | {verdict} | "
              f"{f'{floor[0]:.2f} ({ceiling / floor[0]:.0%})' if floor else '-'} |")
