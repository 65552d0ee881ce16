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


def record(backend, items, decoder, feedsync_seconds, ceiling_seconds, note=""):
    """One backend's figures: items synced, the decoder of its ceiling, both wall times in seconds."""
    ROWS.append((backend, items, decoder, feedsync_seconds, ceiling_seconds, note))


def table():
    """The summary, as a Markdown table, or nothing when no side recorded a ceiling."""
    if not ROWS:
        return
    print("\n## Every backend against its ceiling (same pages, same run)\n")
    print("| backend | items | ceiling decoder | ceiling s | feedsync s | feedsync's share of the ceiling | target |")
    print("|---|---|---|---|---|---|---|")
    for backend, items, decoder, mine, ceiling, note in ROWS:
        share = ceiling / mine if mine else 0.0
        target = TARGETS.get(backend)
        verdict = f">= {target:.0%} {'ok' if share >= target else 'MISS'}" if target else "-"
        print(f"| {backend}{f' ({note})' if note else ''} | {items:,} | {decoder} | {ceiling:.2f} | {mine:.2f} | {share:.0%} | {verdict} |")
