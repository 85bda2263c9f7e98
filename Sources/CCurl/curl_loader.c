#include "curl_loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// The functions of libcurl weir calls, resolved once by load(); read only
// after weir_curl_global_init returned CURLE_OK (pthread_once orders them).
static struct {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *handle);
    CURLcode (*easy_perform)(CURL *handle);
    const char *(*easy_strerror)(CURLcode code);
    CURLcode (*easy_setopt)(CURL *handle, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *handle, CURLINFO info, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *line);
    void (*slist_free_all)(struct curl_slist *list);
} curl;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static CURLcode loaded = CURLE_FAILED_INIT;
static char why[512];

static void load(void) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(why, sizeof why, "cannot load libcurl (Debian's libcurl4): %s", dlerror());
        return;
    }
#define RESOLVE(field, name)                                                                    \
    if ((*(void **)&curl.field = dlsym(library, name)) == NULL) {                               \
        snprintf(why, sizeof why, "libcurl.so.4 has no %s: %s", name, dlerror());               \
        return;                                                                                 \
    }
    RESOLVE(global_init, "curl_global_init")
    RESOLVE(easy_init, "curl_easy_init")
    RESOLVE(easy_cleanup, "curl_easy_cleanup")
    RESOLVE(easy_perform, "curl_easy_perform")
    RESOLVE(easy_strerror, "curl_easy_strerror")
    RESOLVE(easy_setopt, "curl_easy_setopt")
    RESOLVE(easy_getinfo, "curl_easy_getinfo")
    RESOLVE(slist_append, "curl_slist_append")
    RESOLVE(slist_free_all, "curl_slist_free_all")
#undef RESOLVE
    // OpenSSL registers its clean-up with atexit() as its initialization
    // starts, so an exit() during curl_global_init (a command that fails
    // before it reads its URL, while this runs on its own thread) ran the
    // clean-up under the initialization: SIGSEGV in about a third of such
    // runs of the release build (issue 80). The process's end frees all it
    // holds: OpenSSL is told to register none, by the first initialization
    // (the one that decides), when libcurl's is OpenSSL.
    int (*init_crypto)(uint64_t options, const void *settings) = NULL;
    *(void **)&init_crypto = dlsym(library, "OPENSSL_init_crypto");
    if (init_crypto != NULL) (void)init_crypto(0x00080000L /* OPENSSL_INIT_NO_ATEXIT */, NULL);
    loaded = curl.global_init(CURL_GLOBAL_DEFAULT);
    if (loaded != CURLE_OK) {
        snprintf(why, sizeof why, "curl_global_init failed: %s", curl.easy_strerror(loaded));
    }
}

CURLcode weir_curl_global_init(void) {
    pthread_once(&once, load);
    return loaded;
}

static void *load_on_thread(void *unused) {
    (void)unused;
    pthread_once(&once, load);
    return NULL;
}

// An exit() while the loading thread is inside libcurl's libraries: their
// destructors (run by the dynamic loader's exit handler, registered before
// main) must not run under their initialization. Registered before the
// thread starts, this handler runs before that one and after any the load
// registers, and waits for the load to end.
static void finish_load_at_exit(void) { pthread_once(&once, load); }

void weir_curl_load_in_background(void) {
    if (atexit(finish_load_at_exit) != 0) return;
    // The new thread takes the mask it is made with: all blocked, so no
    // signal meant for weir's own handling is ever delivered to it.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pthread_attr_t attributes;
    pthread_t thread;
    if (pthread_attr_init(&attributes) == 0) {
        pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
        (void)pthread_create(&thread, &attributes, load_on_thread, NULL);
        pthread_attr_destroy(&attributes);
    }
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
}

const char *weir_curl_load_error(void) {
    pthread_once(&once, load);
    return why;
}

CURL *weir_curl_easy_init(void) { return curl.easy_init(); }
void weir_curl_easy_cleanup(CURL *handle) { curl.easy_cleanup(handle); }
CURLcode weir_curl_easy_perform(CURL *handle) { return curl.easy_perform(handle); }
const char *weir_curl_easy_strerror(CURLcode code) { return curl.easy_strerror(code); }

struct curl_slist *weir_curl_slist_append(struct curl_slist *list, const char *line) {
    return curl.slist_append(list, line);
}

void weir_curl_slist_free_all(struct curl_slist *list) { curl.slist_free_all(list); }

CURLcode weir_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl.easy_setopt(handle, option, value);
}

CURLcode weir_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl.easy_setopt(handle, option, value);
}

CURLcode weir_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl.easy_setopt(handle, option, value);
}

CURLcode weir_curl_set_callback(CURL *handle, CURLoption option, weir_curl_data_callback value) {
    return curl.easy_setopt(handle, option, value);
}

static volatile sig_atomic_t abandoned;

void weir_curl_abandon_all(void) { abandoned = 1; }

static int abandon_check(void *user, curl_off_t down_total, curl_off_t down_now, curl_off_t up_total,
                         curl_off_t up_now) {
    (void)user, (void)down_total, (void)down_now, (void)up_total, (void)up_now;
    return abandoned ? 1 : 0;
}

CURLcode weir_curl_watch_abandon(CURL *handle) {
    CURLcode code = curl.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, abandon_check);
    return code != CURLE_OK ? code : curl.easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
}

long weir_curl_response_code(CURL *handle) {
    long code = 0;
    curl.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &code);
    return code;
}

const char *weir_curl_effective_url(CURL *handle) {
    char *url = NULL;
    curl.easy_getinfo(handle, CURLINFO_EFFECTIVE_URL, &url);
    return url;
}
