// libfuse 3's high-level API (Debian's libfuse3-dev, 3.12 or later: the
// loop's configuration object) for `weir mount`, and what Swift cannot
// call: the macros that pick a versioned symbol, and syslog's varargs.
#define FUSE_USE_VERSION 312
#include <fuse.h>
#include <syslog.h>

/// fuse_new (a macro naming fuse_new_31) with the operations' own size.
static inline struct fuse *weir_fuse_new(struct fuse_args *args, const struct fuse_operations *operations,
                                         void *data) {
    return fuse_new(args, operations, sizeof(*operations), data);
}

/// Serves requests on up to `threads` threads (fuse_loop_mt, a macro)
/// until the file system is unmounted or a signal ends the loop.
static inline int weir_fuse_loop(struct fuse *fuse, unsigned threads) {
    struct fuse_loop_config *config = fuse_loop_cfg_create();
    if (config == NULL) return -1;
    fuse_loop_cfg_set_max_threads(config, threads);
    fuse_loop_cfg_set_idle_threads(config, threads);
    int result = fuse_loop_mt(fuse, config);
    fuse_loop_cfg_destroy(config);
    return result;
}

/// One line to the system log, as is (no format).
static inline void weir_syslog(const char *message) { syslog(LOG_ERR, "%s", message); }
