// glibc's malloc tuning (mallopt), for the daemon's arenas: part of the C library, nothing to link.
#include <malloc.h>
