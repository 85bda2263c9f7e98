// libcurl for the remote inputs of WeirRemote, loaded when a URL is first
// read rather than linked: linked, libcurl and the libraries it needs
// (OpenSSL, nghttp2, GSSAPI, LDAP… 22 of them) made every weir command's
// start pay the dynamic loader's symbol lookups across them, which took
// longer than a part read's own work. Its types and constants come from
// Debian's libcurl4-openssl-dev header; its functions through these
// wrappers, which also give Swift what it cannot call: curl_easy_setopt and
// curl_easy_getinfo are variadic, so each kind of argument has its own.
#ifndef WEIR_CURL_LOADER_H
#define WEIR_CURL_LOADER_H

#include <curl/curl.h>

/// Loads libcurl (libcurl.so.4) and runs curl_global_init once, for the
/// whole process; later calls return the first one's result. CURLE_OK, or
/// CURLE_FAILED_INIT with weir_curl_load_error() saying why.
CURLcode weir_curl_global_init(void);
/// Why weir_curl_global_init failed (dlerror's words, or libcurl's), or "".
const char *weir_curl_load_error(void);
/// Starts weir_curl_global_init's work on a thread of its own (every signal
/// blocked on it, detached), so that loading libcurl and its libraries
/// overlaps the rest of the start; the first weir_curl_global_init waits for
/// it. Nothing happens if the thread cannot be made. Not before a fork: a
/// child forked while the load runs would wait for it forever.
void weir_curl_load_in_background(void);

/// The libcurl calls WeirRemote makes, valid once weir_curl_global_init
/// returned CURLE_OK.
CURL *weir_curl_easy_init(void);
void weir_curl_easy_cleanup(CURL *handle);
CURLcode weir_curl_easy_perform(CURL *handle);
const char *weir_curl_easy_strerror(CURLcode code);
struct curl_slist *weir_curl_slist_append(struct curl_slist *list, const char *line);
void weir_curl_slist_free_all(struct curl_slist *list);

/// curl_easy_setopt with a long.
CURLcode weir_curl_set_long(CURL *handle, CURLoption option, long value);
/// curl_easy_setopt with a string (copied by libcurl) or NULL.
CURLcode weir_curl_set_string(CURL *handle, CURLoption option, const char *value);
/// curl_easy_setopt with a pointer (user data, a header list, an error buffer).
CURLcode weir_curl_set_pointer(CURL *handle, CURLoption option, void *value);

typedef size_t (*weir_curl_data_callback)(char *data, size_t size, size_t count, void *user);

/// curl_easy_setopt with a body or header callback.
CURLcode weir_curl_set_callback(CURL *handle, CURLoption option, weir_curl_data_callback value);

/// Makes every transfer of `handle` end (CURLE_ABORTED_BY_CALLBACK) once
/// weir_curl_abandon_all was called: libcurl asks at least once a second,
/// a stalled transfer included.
CURLcode weir_curl_watch_abandon(CURL *handle);
/// Ends every transfer under way and each one started later, at once
/// rather than at the stall timeout: a process that is stopping (`weir
/// mount` unmounting on SIGTERM). Async-signal-safe: it sets a flag.
void weir_curl_abandon_all(void);

/// The last response's status code (0 before one).
long weir_curl_response_code(CURL *handle);
/// The URL of the last request (after redirects).
const char *weir_curl_effective_url(CURL *handle);

#endif
