/*
 * sqlite_floor: how long SQLite alone takes to store the posts feedsync stored.
 *
 *     sqlite_floor SOURCE_DB TARGET_DB PAGE_SIZE
 *
 * Reads every row of `posts` from SOURCE_DB (a database feedsync just filled) into memory,
 * creates TARGET_DB with the same schema (tables, the full-text index, indexes and the
 * triggers that keep the index and post_videos in step) and the pragmas feedsync uses (WAL,
 * synchronous NORMAL, statement journals in memory), then times inserting the rows in the
 * order feedsync did, one transaction of PAGE_SIZE rows at a time, through one prepared
 * statement. Each transaction's new posts then enter the search index, are linked to their
 * videos and counted in their feed's change counter, one statement each, as feedsync's store
 * does for a page (SQLite migration 028 took the last two out of per-row triggers).
 *
 * The source's `videos` rows are copied into TARGET_DB before the clock starts, so that the
 * posts link to the same videos feedsync's store linked them to (with an empty `videos` table
 * nothing is linked, and the floor would leave out a fifth of the rows: 19,846 links for
 * 100,000 posts of the reference server).
 *
 * No network, no JSON, no authors, no video lookups: only what any client must at least spend
 * in SQLite to write the same rows into the same schema. Prints one JSON object on stdout:
 * {"rows": N, "wall": seconds, "cpu": seconds}. Exit status 1 on any SQLite error.
 * Built and run by bench.py; see Benchmarks/README.md.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double seconds(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void check(int code, sqlite3 *db, const char *what) {
    if (code != SQLITE_OK && code != SQLITE_DONE && code != SQLITE_ROW) {
        fprintf(stderr, "sqlite_floor: %s: %s\n", what, sqlite3_errmsg(db));
        exit(1);
    }
}

static void exec(sqlite3 *db, const char *sql) { check(sqlite3_exec(db, sql, 0, 0, 0), db, sql); }

int main(int argc, char **argv) {
    if (argc != 4 || atoi(argv[3]) <= 0) {
        fprintf(stderr, "usage: sqlite_floor SOURCE_DB TARGET_DB PAGE_SIZE\n");
        return 64;
    }
    const char *source_path = argv[1], *target_path = argv[2];
    int page_size = atoi(argv[3]);

    sqlite3 *source;
    check(sqlite3_open_v2(source_path, &source, SQLITE_OPEN_READONLY, 0), source, "opening the source");
    /* Untimed: another process closing the file checkpoints it under an exclusive lock. */
    sqlite3_busy_timeout(source, 10000);

    /* The stored columns (a generated column is computed, not inserted), in table order. */
    char names[4096] = "";
    sqlite3_stmt *info;
    check(sqlite3_prepare_v2(source, "SELECT name FROM pragma_table_xinfo('posts') WHERE hidden = 0 ORDER BY cid", -1, &info, 0),
          source, "reading the columns");
    while (sqlite3_step(info) == SQLITE_ROW) {
        if (names[0]) strcat(names, ", ");
        strcat(names, (const char *)sqlite3_column_text(info, 0));
    }
    sqlite3_finalize(info);

    /* The rows, in the order feedsync inserted them, each value copied out. */
    char select[4200];
    snprintf(select, sizeof select, "SELECT %s FROM posts ORDER BY pk", names);
    sqlite3_stmt *read;
    check(sqlite3_prepare_v2(source, select, -1, &read, 0), source, "reading posts");
    int columns = sqlite3_column_count(read);
    size_t rows = 0, capacity = 1024;
    sqlite3_value **values = malloc(capacity * columns * sizeof *values);
    int code;
    while ((code = sqlite3_step(read)) == SQLITE_ROW) {
        if (rows == capacity) values = realloc(values, (capacity *= 2) * columns * sizeof *values);
        for (int c = 0; c < columns; c++) values[rows * columns + c] = sqlite3_value_dup(sqlite3_column_value(read, c));
        rows++;
    }
    check(code, source, "reading posts");
    sqlite3_finalize(read);

    /* The same table, indexes and column order. */
    unlink(target_path);
    char side[4096];
    snprintf(side, sizeof side, "%s-wal", target_path); unlink(side);
    snprintf(side, sizeof side, "%s-shm", target_path); unlink(side);
    sqlite3 *target;
    check(sqlite3_open_v2(target_path, &target, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, 0),
          target, "creating the target");
    /* temp_store MEMORY holds each statement's journal in memory, as feedsync's page commits do
       (SQLiteDatabase.withPageTransaction): past 64 KiB SQLite spills it into a temporary file,
       and a page's search-index statement did: about 15 writes there for each of the WAL's. */
    exec(target, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY;");
    sqlite3_stmt *schema;
    /* Every table but SQLite's and the full-text index's own, then indexes, then triggers. */
    check(sqlite3_prepare_v2(source, "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' "
                                     "AND name NOT LIKE 'posts_fts_%' ORDER BY type = 'index', type = 'trigger'",
                             -1, &schema, 0), source, "reading the schema");
    while ((code = sqlite3_step(schema)) == SQLITE_ROW) exec(target, (const char *)sqlite3_column_text(schema, 0));
    check(code, source, "reading the schema");
    sqlite3_finalize(schema);

    /* The videos the posts link to, untimed: feedsync's store wrote them before the posts. */
    char copy[4200];
    char *quoted = sqlite3_mprintf("%Q", source_path);
    snprintf(copy, sizeof copy, "ATTACH %s AS source; INSERT INTO videos SELECT * FROM source.videos; DETACH source;", quoted);
    sqlite3_free(quoted);
    exec(target, copy);

    char sql[8192];
    snprintf(sql, sizeof sql, "INSERT INTO posts (%s) VALUES (?", names);
    for (int c = 1; c < columns; c++) strcat(sql, ", ?");
    strcat(sql, ") ON CONFLICT DO NOTHING");
    sqlite3_stmt *insert;
    check(sqlite3_prepare_v3(target, sql, -1, SQLITE_PREPARE_PERSISTENT, &insert, 0), target, sql);

    /* The search index takes each page's new posts in one statement, as feedsync does. */
    sqlite3_stmt *index = 0;
    if (sqlite3_prepare_v2(target, "INSERT INTO posts_fts (rowid, text, title, content_warning, author_handle, author_name) "
                                   "SELECT pk, text, title, content_warning, author_handle, author_name FROM posts WHERE pk > ?",
                           -1, &index, 0) != SQLITE_OK) index = 0;

    /* Their links to their videos and their feed's counter, as feedsync's store writes them. */
    sqlite3_stmt *link = 0, *count = 0;
    if (sqlite3_prepare_v2(target, "INSERT OR IGNORE INTO post_videos (post_pk, video_pk, position) "
                                   "SELECT p.pk, v.pk, j.key FROM posts p CROSS JOIN json_each(p.video_ids) j "
                                   "CROSS JOIN videos v ON v.feed = p.feed AND v.id = j.value "
                                   "WHERE p.pk > ? AND p.video_ids <> '[]'", -1, &link, 0) != SQLITE_OK) link = 0;
    if (sqlite3_prepare_v2(target, "INSERT INTO feed_versions (feed, version) SELECT feed, count(*) FROM posts WHERE pk > ? "
                                   "GROUP BY feed ON CONFLICT (feed) DO UPDATE SET version = version + excluded.version",
                           -1, &count, 0) != SQLITE_OK) count = 0;

    /* The last post's key before each page (the target's posts table is new): the key the
       videos' copy left in sqlite3_last_insert_rowid is not a post's. */
    sqlite3_int64 before = 0;
    double wall = seconds(CLOCK_MONOTONIC), cpu = seconds(CLOCK_PROCESS_CPUTIME_ID);
    for (size_t start = 0; start < rows; start += page_size) {
        exec(target, "BEGIN IMMEDIATE");
        for (size_t row = start; row < rows && row < start + page_size; row++) {
            for (int c = 0; c < columns; c++)
                check(sqlite3_bind_value(insert, c + 1, values[row * columns + c]), target, "binding");
            check(sqlite3_step(insert), target, "inserting");
            sqlite3_reset(insert);
        }
        /* The page's last post (its triggers' own inserts do not change this). */
        sqlite3_int64 last = sqlite3_last_insert_rowid(target);
        sqlite3_stmt *per_page[] = {index, link, count};
        for (int s = 0; s < 3; s++) {
            if (!per_page[s]) continue;
            sqlite3_bind_int64(per_page[s], 1, before);
            check(sqlite3_step(per_page[s]), target, "indexing, linking and counting");
            sqlite3_reset(per_page[s]);
        }
        before = last;
        exec(target, "COMMIT");
    }
    sqlite3_finalize(index);
    sqlite3_finalize(link);
    sqlite3_finalize(count);
    wall = seconds(CLOCK_MONOTONIC) - wall;
    cpu = seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu;

    sqlite3_finalize(insert);
    check(sqlite3_close(target), target, "closing the target");
    printf("{\"rows\": %zu, \"wall\": %.4f, \"cpu\": %.4f}\n", rows, wall, cpu);
    for (size_t i = 0; i < rows * columns; i++) sqlite3_value_free(values[i]);
    free(values);
    sqlite3_close(source);
    return 0;
}
