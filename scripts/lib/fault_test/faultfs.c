/*
 * faultfs: a FUSE file system that passes through to a folder and fails
 * chosen calls by rule, for scripts/harness/fault-test.
 *
 *   faultfs SOURCE MOUNTPOINT RULES LOG
 *
 * Every call goes to the same path under SOURCE. RULES is a file re-read
 * whenever it changes (its inode, size or time: write a new one and rename
 * it over), one rule a line, `#` comments:
 *
 *   OP GLOB ACTION [after=BYTES] [from=N] [count=N] [delay=MS] [keep]
 *
 *   OP      read write fsync (fsync and fdatasync) fdatasync fsyncdir rename
 *           (matched on the source name) flush create open unlink
 *   GLOB    fnmatch(3) pattern on the path from the mount's root ("/d/x"),
 *           `*` crossing slashes
 *   ACTION  EIO ENOSPC EDQUOT EROFS (the call fails with that errno),
 *           short (a write writes half its bytes, at least one), ok (nothing:
 *           with delay=, a slow call)
 *   after=  read/write: only a call whose bytes reach past this offset
 *   from=   the first matching call that fails (1-based; default 1)
 *   count=  how many fail from there (default 0: every one; 1: the first only)
 *   delay=  milliseconds to wait before the call (failing or not)
 *   keep    fsync: do not drop the unsynced bytes (see below)
 *
 * A failed fsync or fdatasync does what Linux does to a file whose writeback
 * failed (PostgreSQL's "fsyncgate", 2018): the bytes written since the file's
 * last successful sync are gone -- here punched out of the file under SOURCE,
 * so that they read back as zeros once the file is opened again -- and the
 * next sync succeeds. A program that retries the sync and trusts it has lost
 * data, and a check of the file shows it. `keep` leaves them.
 *
 * LOG gets one line per call that matters for ordering (create, write,
 * rename, unlink, fsync, fdatasync, fsyncdir) and per injected fault:
 *   "OP PATH[ -> TO] = RESULT" with RESULT 0, -ERRNO, or "short N/M", and
 *   " FAULT" when a rule made it.
 * Once the kernel's INIT arrives (the mount is live), "ready" goes to stdout.
 */
#define FUSE_USE_VERSION 35
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <fuse.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

enum op {
    OP_READ = 1, OP_WRITE = 2, OP_FSYNC = 4, OP_FDATASYNC = 8, OP_FSYNCDIR = 16, OP_RENAME = 32,
    OP_FLUSH = 64, OP_CREATE = 128, OP_OPEN = 256, OP_UNLINK = 512
};
enum { ACT_ERRNO, ACT_SHORT, ACT_OK };

struct rule {
    int ops;
    char glob[PATH_MAX];
    int action, error;
    long long after;
    long from, count, delay_ms;
    int keep;
    long matched;
};

/* The bytes written to a file since its last good sync, by inode. */
struct dirty { ino_t ino; dev_t dev; long long lo, hi; };

static const char *source;
static char rules_path[PATH_MAX];
static FILE *log_file;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct rule *rules;
static int rule_count;
static struct stat rules_seen;
static struct dirty *dirties;
static int dirty_count, dirty_capacity;

static void full(const char *path, char *out) {
    snprintf(out, PATH_MAX, "%s%s", source, path ? path : "");
}

static int parse_errno(const char *word, int *action, int *error) {
    static const struct { const char *name; int code; } names[] = {
        {"EIO", EIO}, {"ENOSPC", ENOSPC}, {"EDQUOT", EDQUOT}, {"EROFS", EROFS}, {"EPERM", EPERM},
        {"EACCES", EACCES}, {"EFBIG", EFBIG}, {"ENOENT", ENOENT},
    };
    if (strcmp(word, "short") == 0) { *action = ACT_SHORT; *error = 0; return 0; }
    if (strcmp(word, "ok") == 0) { *action = ACT_OK; *error = 0; return 0; }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(word, names[i].name) == 0) { *action = ACT_ERRNO; *error = names[i].code; return 0; }
    }
    return -1;
}

static int parse_op(const char *word) {
    static const struct { const char *name; int op; } names[] = {
        {"read", OP_READ}, {"write", OP_WRITE}, {"fsync", OP_FSYNC | OP_FDATASYNC}, {"fdatasync", OP_FDATASYNC},
        {"fsyncdir", OP_FSYNCDIR}, {"rename", OP_RENAME}, {"flush", OP_FLUSH}, {"create", OP_CREATE},
        {"open", OP_OPEN}, {"unlink", OP_UNLINK},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(word, names[i].name) == 0) return names[i].op;
    }
    return 0;
}

/* Re-reads the rules when their file changed (under the lock); a line that
 * does not parse is reported on stderr and skipped. */
static void reload(void) {
    struct stat now;
    if (stat(rules_path, &now) != 0) memset(&now, 0, sizeof now);
    if (now.st_ino == rules_seen.st_ino && now.st_size == rules_seen.st_size &&
        now.st_mtim.tv_sec == rules_seen.st_mtim.tv_sec && now.st_mtim.tv_nsec == rules_seen.st_mtim.tv_nsec &&
        now.st_ctim.tv_nsec == rules_seen.st_ctim.tv_nsec) {
        return;
    }
    rules_seen = now;
    free(rules);
    rules = NULL;
    rule_count = 0;
    FILE *file = fopen(rules_path, "r");
    if (file == NULL) return;
    char line[2 * PATH_MAX];
    while (fgets(line, sizeof line, file)) {
        char *save = NULL, *word = strtok_r(line, " \t\n", &save);
        if (word == NULL || word[0] == '#') continue;
        struct rule rule = {.after = -1, .from = 1};
        rule.ops = parse_op(word);
        char *glob = strtok_r(NULL, " \t\n", &save), *action = strtok_r(NULL, " \t\n", &save);
        if (!rule.ops || glob == NULL || action == NULL || parse_errno(action, &rule.action, &rule.error) != 0) {
            fprintf(stderr, "faultfs: a rule that does not parse: %s\n", line);
            continue;
        }
        snprintf(rule.glob, sizeof rule.glob, "%s", glob);
        while ((word = strtok_r(NULL, " \t\n", &save)) != NULL) {
            if (strncmp(word, "after=", 6) == 0) rule.after = atoll(word + 6);
            else if (strncmp(word, "from=", 5) == 0) rule.from = atol(word + 5);
            else if (strncmp(word, "count=", 6) == 0) rule.count = atol(word + 6);
            else if (strncmp(word, "delay=", 6) == 0) rule.delay_ms = atol(word + 6);
            else if (strcmp(word, "keep") == 0) rule.keep = 1;
            else fprintf(stderr, "faultfs: an unknown option: %s\n", word);
        }
        rules = realloc(rules, sizeof *rules * (rule_count + 1));
        rules[rule_count++] = rule;
    }
    fclose(file);
}

/* What to do with a call: the matching rule's action (ACT_OK and no delay
 * when none). A rule counts every call it matches; it acts on those from
 * `from`, `count` of them. */
struct verdict { int action, error; long delay_ms; int keep; };

static struct verdict judge(int op, const char *path, long long offset, size_t size) {
    struct verdict verdict = {ACT_OK, 0, 0, 0};
    pthread_mutex_lock(&lock);
    reload();
    for (int i = 0; i < rule_count; i++) {
        struct rule *rule = &rules[i];
        if (!(rule->ops & op) || fnmatch(rule->glob, path ? path : "", 0) != 0) continue;
        if (rule->after >= 0 && (op & (OP_READ | OP_WRITE)) && offset + (long long)size <= rule->after) continue;
        long number = ++rule->matched;
        if (number < rule->from || (rule->count > 0 && number >= rule->from + rule->count)) continue;
        verdict.action = rule->action;
        verdict.error = rule->error;
        verdict.delay_ms = rule->delay_ms;
        verdict.keep = rule->keep;
        break;
    }
    pthread_mutex_unlock(&lock);
    if (verdict.delay_ms > 0) {
        struct timespec wait = {verdict.delay_ms / 1000, (verdict.delay_ms % 1000) * 1000000L};
        while (nanosleep(&wait, &wait) != 0 && errno == EINTR) {}
    }
    return verdict;
}

static int injected(struct verdict verdict) {
    return verdict.action == ACT_ERRNO || verdict.action == ACT_SHORT || verdict.delay_ms > 0;
}

static void note(const char *fmt, ...) {
    pthread_mutex_lock(&lock);
    va_list args;
    va_start(args, fmt);
    vfprintf(log_file, fmt, args);
    va_end(args);
    fputc('\n', log_file);
    fflush(log_file);
    pthread_mutex_unlock(&lock);
}

static struct dirty *dirty_of(int fd, int create) {
    struct stat info;
    if (fstat(fd, &info) != 0) return NULL;
    for (int i = 0; i < dirty_count; i++) {
        if (dirties[i].ino == info.st_ino && dirties[i].dev == info.st_dev) return &dirties[i];
    }
    if (!create) return NULL;
    if (dirty_count == dirty_capacity) {
        dirty_capacity = dirty_capacity ? 2 * dirty_capacity : 64;
        dirties = realloc(dirties, sizeof *dirties * dirty_capacity);
    }
    dirties[dirty_count] = (struct dirty){info.st_ino, info.st_dev, -1, -1};
    return &dirties[dirty_count++];
}

static void mark_written(int fd, long long offset, long long size) {
    pthread_mutex_lock(&lock);
    struct dirty *dirty = dirty_of(fd, 1);
    if (dirty) {
        if (dirty->lo < 0 || offset < dirty->lo) dirty->lo = offset;
        if (offset + size > dirty->hi) dirty->hi = offset + size;
    }
    pthread_mutex_unlock(&lock);
}

/* After a sync: clean (it succeeded), or the unsynced bytes dropped (it
 * failed, unless `keep`). Returns how many bytes were dropped. */
static long long settle(int fd, int failed, int keep) {
    long long lo = -1, hi = -1;
    pthread_mutex_lock(&lock);
    struct dirty *dirty = dirty_of(fd, 0);
    if (dirty) {
        lo = dirty->lo;
        hi = dirty->hi;
        dirty->lo = dirty->hi = -1;
    }
    pthread_mutex_unlock(&lock);
    if (!failed || keep || lo < 0 || hi <= lo) return 0;
    if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, lo, hi - lo) != 0) return -errno;
    return hi - lo;
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
    conn->max_write = 1 << 20;  /* whole writes of up to 1 MiB (the kernel asks max_pages to match) */
    conn->max_readahead = 1 << 20;
    cfg->use_ino = 1;
    cfg->hard_remove = 1;      /* an open file unlinked is gone, not renamed .fuse_hidden */
    cfg->nullpath_ok = 0;  /* paths in the log, while the file has a name */
    cfg->entry_timeout = 0;
    cfg->attr_timeout = 0;
    cfg->negative_timeout = 0;
    cfg->kernel_cache = 0;     /* each open reads the file anew: dropped bytes show */
    printf("ready\n");
    fflush(stdout);
    return NULL;
}

static int fs_getattr(const char *path, struct stat *info, struct fuse_file_info *fi) {
    char name[PATH_MAX];
    if (fi) return fstat(fi->fh, info) == 0 ? 0 : -errno;
    full(path, name);
    return lstat(name, info) == 0 ? 0 : -errno;
}

static int fs_access(const char *path, int mask) {
    char name[PATH_MAX];
    full(path, name);
    return access(name, mask) == 0 ? 0 : -errno;
}

static int fs_readlink(const char *path, char *buffer, size_t size) {
    char name[PATH_MAX];
    full(path, name);
    ssize_t n = readlink(name, buffer, size - 1);
    if (n < 0) return -errno;
    buffer[n] = 0;
    return 0;
}

static int fs_opendir(const char *path, struct fuse_file_info *fi) {
    char name[PATH_MAX];
    full(path, name);
    DIR *dir = opendir(name);
    if (!dir) return -errno;
    fi->fh = (uint64_t)(uintptr_t)dir;
    return 0;
}

static int fs_readdir(const char *path, void *buffer, fuse_fill_dir_t fill, off_t offset,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags) {
    (void)path; (void)offset; (void)flags;
    DIR *dir = (DIR *)(uintptr_t)fi->fh;
    rewinddir(dir);
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        struct stat info = {0};
        info.st_ino = entry->d_ino;
        info.st_mode = (mode_t)entry->d_type << 12;
        if (fill(buffer, entry->d_name, &info, 0, 0)) break;
    }
    return 0;
}

static int fs_releasedir(const char *path, struct fuse_file_info *fi) {
    (void)path;
    closedir((DIR *)(uintptr_t)fi->fh);
    return 0;
}

static int fs_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi) {
    struct verdict verdict = judge(OP_FSYNCDIR, path, 0, 0);
    int result;
    if (verdict.action == ACT_ERRNO) result = -verdict.error;
    else {
        int fd = dirfd((DIR *)(uintptr_t)fi->fh);
        result = (datasync ? fdatasync(fd) : fsync(fd)) == 0 ? 0 : -errno;
    }
    note("fsyncdir %s = %d%s", path ? path : "?", result, injected(verdict) ? " FAULT" : "");
    return result;
}

static int fs_mkdir(const char *path, mode_t mode) {
    char name[PATH_MAX];
    full(path, name);
    return mkdir(name, mode) == 0 ? 0 : -errno;
}

static int fs_unlink(const char *path) {
    char name[PATH_MAX];
    struct verdict verdict = judge(OP_UNLINK, path, 0, 0);
    int result;
    if (verdict.action == ACT_ERRNO) result = -verdict.error;
    else { full(path, name); result = unlink(name) == 0 ? 0 : -errno; }
    note("unlink %s = %d%s", path, result, injected(verdict) ? " FAULT" : "");
    return result;
}

static int fs_rmdir(const char *path) {
    char name[PATH_MAX];
    full(path, name);
    return rmdir(name) == 0 ? 0 : -errno;
}

static int fs_symlink(const char *target, const char *path) {
    char name[PATH_MAX];
    full(path, name);
    return symlink(target, name) == 0 ? 0 : -errno;
}

static int fs_link(const char *from, const char *to) {
    char a[PATH_MAX], b[PATH_MAX];
    full(from, a);
    full(to, b);
    return link(a, b) == 0 ? 0 : -errno;
}

static int fs_rename(const char *from, const char *to, unsigned int flags) {
    char a[PATH_MAX], b[PATH_MAX];
    struct verdict verdict = judge(OP_RENAME, from, 0, 0);
    int result;
    if (verdict.action == ACT_ERRNO) result = -verdict.error;
    else {
        full(from, a);
        full(to, b);
        result = renameat2(AT_FDCWD, a, AT_FDCWD, b, flags) == 0 ? 0 : -errno;
    }
    note("rename %s -> %s = %d%s", from, to, result, injected(verdict) ? " FAULT" : "");
    return result;
}

static int fs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi) {
    char name[PATH_MAX];
    if (fi) return fchmod(fi->fh, mode) == 0 ? 0 : -errno;
    full(path, name);
    return chmod(name, mode) == 0 ? 0 : -errno;
}

static int fs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi) {
    char name[PATH_MAX];
    if (fi) return fchown(fi->fh, uid, gid) == 0 ? 0 : -errno;
    full(path, name);
    return lchown(name, uid, gid) == 0 ? 0 : -errno;
}

static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi) {
    char name[PATH_MAX];
    if (fi) return ftruncate(fi->fh, size) == 0 ? 0 : -errno;
    full(path, name);
    return truncate(name, size) == 0 ? 0 : -errno;
}

static int fs_utimens(const char *path, const struct timespec times[2], struct fuse_file_info *fi) {
    char name[PATH_MAX];
    if (fi) return futimens(fi->fh, times) == 0 ? 0 : -errno;
    full(path, name);
    return utimensat(AT_FDCWD, name, times, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
}

static int fs_create(const char *path, mode_t mode, struct fuse_file_info *fi) {
    char name[PATH_MAX];
    struct verdict verdict = judge(OP_CREATE, path, 0, 0);
    int result;
    if (verdict.action == ACT_ERRNO) result = -verdict.error;
    else {
        full(path, name);
        int fd = open(name, fi->flags, mode);
        result = fd >= 0 ? 0 : -errno;
        if (fd >= 0) fi->fh = fd;
    }
    note("create %s = %d%s", path, result, injected(verdict) ? " FAULT" : "");
    return result;
}

static int fs_open(const char *path, struct fuse_file_info *fi) {
    char name[PATH_MAX];
    struct verdict verdict = judge(OP_OPEN, path, 0, 0);
    if (verdict.action == ACT_ERRNO) {
        note("open %s = %d FAULT", path, -verdict.error);
        return -verdict.error;
    }
    full(path, name);
    int fd = open(name, fi->flags);
    if (fd < 0) return -errno;
    fi->fh = fd;
    return 0;
}

static int fs_read(const char *path, char *buffer, size_t size, off_t offset, struct fuse_file_info *fi) {
    struct verdict verdict = judge(OP_READ, path, offset, size);
    if (verdict.action == ACT_ERRNO) {
        note("read %s %lld+%zu = %d FAULT", path ? path : "?", (long long)offset, size, -verdict.error);
        return -verdict.error;
    }
    ssize_t n = pread(fi->fh, buffer, size, offset);
    if (injected(verdict)) note("read %s %lld+%zu = %zd FAULT", path ? path : "?", (long long)offset, size, n);
    return n >= 0 ? (int)n : -errno;
}

static int fs_write(const char *path, const char *buffer, size_t size, off_t offset, struct fuse_file_info *fi) {
    struct verdict verdict = judge(OP_WRITE, path, offset, size);
    if (verdict.action == ACT_ERRNO) {
        note("write %s %lld+%zu = %d FAULT", path ? path : "?", (long long)offset, size, -verdict.error);
        return -verdict.error;
    }
    size_t wanted = size;
    if (verdict.action == ACT_SHORT && size > 1) wanted = size / 2;
    ssize_t n = pwrite(fi->fh, buffer, wanted, offset);
    if (n < 0) return -errno;
    mark_written(fi->fh, offset, n);
    if (verdict.action == ACT_SHORT) {
        note("write %s %lld+%zu = short %zd/%zu FAULT", path ? path : "?", (long long)offset, size, n, size);
    } else {
        note("write %s %lld+%zu = %zd%s", path ? path : "?", (long long)offset, size, n,
             injected(verdict) ? " FAULT" : "");
    }
    return (int)n;
}

static int fs_statfs(const char *path, struct statvfs *info) {
    char name[PATH_MAX];
    full(path, name);
    return statvfs(name, info) == 0 ? 0 : -errno;
}

static int fs_flush(const char *path, struct fuse_file_info *fi) {
    struct verdict verdict = judge(OP_FLUSH, path, 0, 0);
    int result = 0;
    if (verdict.action == ACT_ERRNO) result = -verdict.error;
    else {
        /* What close() does to the file under SOURCE: a descriptor dup'd and closed. */
        int fd = dup(fi->fh);
        if (fd < 0 || close(fd) != 0) result = -errno;
    }
    if (fi->flags & (O_WRONLY | O_RDWR) || injected(verdict)) {
        note("flush %s = %d%s", path ? path : "?", result, injected(verdict) ? " FAULT" : "");
    }
    return result;
}

static int fs_release(const char *path, struct fuse_file_info *fi) {
    (void)path;
    close(fi->fh);
    return 0;
}

static int fs_fsync(const char *path, int datasync, struct fuse_file_info *fi) {
    int op = datasync ? OP_FDATASYNC : OP_FSYNC;
    struct verdict verdict = judge(op, path, 0, 0);
    int result;
    long long dropped = 0;
    if (verdict.action == ACT_ERRNO) {
        result = -verdict.error;
        dropped = settle(fi->fh, 1, verdict.keep);
    } else {
        result = (datasync ? fdatasync(fi->fh) : fsync(fi->fh)) == 0 ? 0 : -errno;
        settle(fi->fh, result != 0, 0);
    }
    note("%s %s = %d%s dropped=%lld", datasync ? "fdatasync" : "fsync", path ? path : "?", result,
         injected(verdict) ? " FAULT" : "", dropped);
    return result;
}

static int fs_fallocate(const char *path, int mode, off_t offset, off_t length, struct fuse_file_info *fi) {
    (void)path;
    return fallocate(fi->fh, mode, offset, length) == 0 ? 0 : -errno;
}

static off_t fs_lseek(const char *path, off_t offset, int whence, struct fuse_file_info *fi) {
    (void)path;
    off_t result = lseek(fi->fh, offset, whence);
    return result >= 0 ? result : -errno;
}

static const struct fuse_operations operations = {
    .init = fs_init, .getattr = fs_getattr, .access = fs_access, .readlink = fs_readlink,
    .opendir = fs_opendir, .readdir = fs_readdir, .releasedir = fs_releasedir, .fsyncdir = fs_fsyncdir,
    .mkdir = fs_mkdir, .unlink = fs_unlink, .rmdir = fs_rmdir, .symlink = fs_symlink, .link = fs_link,
    .rename = fs_rename, .chmod = fs_chmod, .chown = fs_chown, .truncate = fs_truncate, .utimens = fs_utimens,
    .create = fs_create, .open = fs_open, .read = fs_read, .write = fs_write, .statfs = fs_statfs,
    .flush = fs_flush, .release = fs_release, .fsync = fs_fsync, .fallocate = fs_fallocate, .lseek = fs_lseek,
};

int main(int argc, char *argv[]) {
    if (argc < 5) {
        fprintf(stderr, "usage: faultfs SOURCE MOUNTPOINT RULES LOG [FUSE options]\n");
        return 2;
    }
    static char real[PATH_MAX];
    if (realpath(argv[1], real) == NULL) { perror(argv[1]); return 2; }
    source = real;
    if (realpath(argv[3], rules_path) == NULL) snprintf(rules_path, sizeof rules_path, "%s", argv[3]);
    log_file = fopen(argv[4], "a");
    if (log_file == NULL) { perror(argv[4]); return 2; }
    /* Gone with the script that started it, however it ends (SIGKILL too):
     * fuse_main unmounts on SIGTERM. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() == 1) return 2;
    umask(0);
    /* Foreground, many threads. */
    char *args[32];
    int n = 0;
    args[n++] = argv[0];
    args[n++] = argv[2];
    args[n++] = "-f";
    args[n++] = "-o";
    args[n++] = "fsname=faultfs,subtype=faultfs";
    for (int i = 5; i < argc && n < 31; i++) args[n++] = argv[i];
    args[n] = NULL;
    return fuse_main(n, args, &operations, NULL);
}
