// libcurl for Swift: curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot
// call, so each argument type gets a typed inline wrapper (as swift-corelibs-foundation does).
#include <curl/curl.h>

static inline CURLcode feedsync_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode feedsync_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode feedsync_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode feedsync_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode feedsync_setopt_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

typedef size_t (*feedsync_data_callback)(char *data, size_t size, size_t count, void *context);
typedef int (*feedsync_progress_callback)(void *context, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);

static inline CURLcode feedsync_setopt_data_callback(CURL *handle, CURLoption option, feedsync_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode feedsync_setopt_progress_callback(CURL *handle, feedsync_progress_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}

static inline CURLcode feedsync_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

// The socket of a CURLOPT_CONNECT_ONLY connection, to wait on with poll(2) (a WebSocket).
static inline CURLcode feedsync_getinfo_socket(CURL *handle, curl_socket_t *value) {
    return curl_easy_getinfo(handle, CURLINFO_ACTIVESOCKET, value);
}
