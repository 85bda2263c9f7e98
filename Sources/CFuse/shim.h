// libfuse 3's low-level API (Debian's libfuse3-dev, 3.12 or later: the
// loop's configuration object) for `weir mount`, and what Swift cannot
// call: the macros that pick a versioned symbol, and syslog's varargs; and
// for the mount's life, the calls glibc declares only under _GNU_SOURCE or
// not at all (statx, prctl's parent-death signal, signalfd).
#define FUSE_USE_VERSION 312
#include <fuse3/fuse_lowlevel.h>
#include <stddef.h>
#include <syslog.h>
#include <fcntl.h>
#include <linux/stat.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/// The device of the file system at `path` (`st_dev`, as major << 32 | minor)
/// in `device`; 0, or -1 with errno. The kernel answers from what it has
/// (statx's AT_STATX_DONT_SYNC): no request goes to a FUSE file system there,
/// so its own daemon may ask while it serves none (before its loop, after it).
static inline int weir_mount_device(const char *path, unsigned long long *device) {
    struct statx status;
    if (syscall(SYS_statx, AT_FDCWD, path, 0x4000 /* AT_STATX_DONT_SYNC */, STATX_TYPE, &status) != 0) return -1;
    *device = (unsigned long long)status.stx_dev_major << 32 | status.stx_dev_minor;
    return 0;
}

/// prctl(PR_SET_PDEATHSIG, signal): `signal` comes to the calling process
/// when its parent ends (0: nothing comes). 0, or -1 with errno.
static inline int weir_parent_death_signal(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}

/// signalfd(-1, signals, SFD_CLOEXEC): a descriptor from which each of
/// `signals` (blocked by the caller) is read as a 128-byte record, its
/// number in the first 4 bytes. The descriptor, or -1 with errno.
static inline int weir_signal_descriptor(const sigset_t *signals) {
    return signalfd(-1, signals, SFD_CLOEXEC);
}
