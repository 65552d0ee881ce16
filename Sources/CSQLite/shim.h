#ifndef FEEDSYNC_CSQLITE_SHIM_H
#define FEEDSYNC_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
