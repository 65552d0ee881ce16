#ifndef FEEDSYNC_CSQLITE_SHIM_H
#define FEEDSYNC_CSQLITE_SHIM_H
#include <sqlite3.h>

// sqlite3_config is variadic, which Swift cannot call: one typed wrapper per use.

/// Turns off SQLite's memory statistics, whose upkeep takes a process-wide mutex on every
/// allocation and free. Only takes effect before SQLite initializes (before the first
/// connection); later it returns SQLITE_MISUSE and changes nothing.
static inline int feedsync_sqlite3_config_memstatus(int on) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on);
}
#endif
