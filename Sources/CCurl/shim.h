// libcurl (Debian's libcurl4-openssl-dev) for the remote inputs of
// WeirRemote, and what Swift cannot call: curl_easy_setopt and
// curl_easy_getinfo are variadic, so each kind of argument gets a typed
// helper.
#include <curl/curl.h>

/// curl_easy_setopt with a long.
static inline CURLcode weir_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt with a string (copied by libcurl) or NULL.
static inline CURLcode weir_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt with a pointer (user data, a header list, an error buffer).
static inline CURLcode weir_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

/// The body and header callbacks' type (CURLOPT_WRITEFUNCTION, CURLOPT_HEADERFUNCTION).
typedef size_t (*weir_curl_data_callback)(char *data, size_t size, size_t count, void *user);

/// curl_easy_setopt with a body or header callback.
static inline CURLcode weir_curl_set_callback(CURL *handle, CURLoption option, weir_curl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}

/// CURLINFO_RESPONSE_CODE: the last response's status (after redirects).
static inline long weir_curl_response_code(CURL *handle) {
    long code = 0;
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &code);
    return code;
}

/// CURLINFO_EFFECTIVE_URL: the URL the last response came from (after redirects); NULL if unknown.
static inline const char *weir_curl_effective_url(CURL *handle) {
    char *url = NULL;
    curl_easy_getinfo(handle, CURLINFO_EFFECTIVE_URL, &url);
    return url;
}

/// curl_global_init with CURL_GLOBAL_DEFAULT (a macro of macros).
static inline CURLcode weir_curl_global_init(void) { return curl_global_init(CURL_GLOBAL_DEFAULT); }
