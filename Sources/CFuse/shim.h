// libfuse 3's low-level API (Debian's libfuse3-dev, 3.12 or later: the
// loop's configuration object) for `weir mount`, and what Swift cannot
// call: the macros that pick a versioned symbol, and syslog's varargs.
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <stddef.h>
#include <syslog.h>

/// fuse_session_new with the operations' own size.
static inline struct fuse_session *weir_fuse_session_new(struct fuse_args *args,
                                                         const struct fuse_lowlevel_ops *operations, void *data) {
    return fuse_session_new(args, operations, sizeof(*operations), data);
}

/// Serves requests on up to `threads` threads (fuse_session_loop_mt, a
/// macro) until the file system is unmounted or a signal ends the loop.
static inline int weir_fuse_session_loop(struct fuse_session *session, unsigned threads) {
    struct fuse_loop_config *config = fuse_loop_cfg_create();
    if (config == NULL) return -1;
    fuse_loop_cfg_set_max_threads(config, threads);
    fuse_loop_cfg_set_idle_threads(config, threads);
    int result = fuse_session_loop_mt(session, config);
    fuse_loop_cfg_destroy(config);
    return result;
}

/// One line to the system log, as is (no format).
static inline void weir_syslog(const char *message) { syslog(LOG_ERR, "%s", message); }
