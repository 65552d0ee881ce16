#ifndef FEEDSYNC_CSODIUM_SHIM_H
#define FEEDSYNC_CSODIUM_SHIM_H
#include <sodium.h>
#endif
