#define _GNU_SOURCE
#include "zstd_trace_log.h"

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

// libzstd's ZSTD_Trace (lib/common/zstd_trace.h, which libzstd-dev does not
// install), the same from 1.5.0 through 1.5.6; a line is written only when
// the library says its version is the header's (trace->version).
typedef struct {
    unsigned version;
    unsigned streaming;
    unsigned dictionaryID;
    unsigned dictionaryIsCold;
    size_t dictionarySize;
    size_t uncompressedSize;
    size_t compressedSize;
    const ZSTD_CCtx_params *params;
    const ZSTD_CCtx *cctx;
    const ZSTD_DCtx *dctx;
} weir_zstd_trace;

typedef unsigned long long weir_trace_ctx;

/// The log's descriptor, -1 when off; frames end on any worker thread.
static atomic_int trace_fd = -1;
/// CLOCK_MONOTONIC when the log was opened, in nanoseconds.
static unsigned long long trace_epoch;

static unsigned long long now_nanos(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return (unsigned long long)time.tv_sec * 1000000000ull + (unsigned long long)time.tv_nsec;
}

int weir_trace_open(const char *path) {
    struct stat status;
    int const header = stat(path, &status) != 0 || !S_ISREG(status.st_mode);
    int const fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    if (fd < 0) return -1;
    if (header) {
        static const char line[] = "Algorithm, Version, Method, Mode, Level, Workers, Dictionary Size, "
                                   "Uncompressed Size, Compressed Size, Duration Nanos, Compression Ratio, Speed MB/s\n";
        if (write(fd, line, sizeof line - 1) != (ssize_t)(sizeof line - 1)) {
            int const saved = errno ? errno : EIO;
            close(fd);
            errno = saved;
            return -1;
        }
    }
    trace_epoch = now_nanos();
    int const old = atomic_exchange(&trace_fd, fd);
    if (old >= 0) close(old);
    return 0;
}

void weir_trace_close(void) {
    int const fd = atomic_exchange(&trace_fd, -1);
    if (fd >= 0) close(fd);
}

int weir_trace_hooks_linked(void) {
    // What libzstd's weak reference resolves to is what the dynamic linker
    // finds first by name: weir's own hook only if the executable exports it.
    void *const found = dlsym(RTLD_DEFAULT, "ZSTD_trace_compress_end");
    return found != NULL;
}

/// A frame's start: nanoseconds since the log opened, plus one (0 tells
/// libzstd not to call the end hook).
static weir_trace_ctx frame_begins(void) {
    if (atomic_load(&trace_fd) < 0) return 0;
    return now_nanos() - trace_epoch + 1;
}

/// One CSV line, written with one write(2) to a file opened O_APPEND, so that
/// lines from frames ending at once on several threads do not mix.
static void frame_ends(const char *method, weir_trace_ctx begin, const weir_zstd_trace *trace) {
    int const fd = atomic_load(&trace_fd);
    if (fd < 0 || trace == NULL || trace->version != ZSTD_versionNumber()) return;
    unsigned long long const end = now_nanos() - trace_epoch + 1;
    unsigned long long const duration = end > begin ? end - begin : 0;
    int level = 0, workers = 0;
    if (trace->params != NULL) {
        ZSTD_CCtxParams_getParameter(trace->params, ZSTD_c_compressionLevel, &level);
        ZSTD_CCtxParams_getParameter(trace->params, ZSTD_c_nbWorkers, &workers);
    }
    double const ratio = (double)trace->uncompressedSize / (double)trace->compressedSize;
    double const speed = (double)trace->uncompressedSize * 1000.0 / (double)duration;
    char line[512];
    int const length = snprintf(line, sizeof line, "zstd, %u, %s, %s, %d, %d, %llu, %llu, %llu, %llu, %.2f, %.2f\n",
                                trace->version, method, trace->streaming ? "streaming" : "single-pass", level, workers,
                                (unsigned long long)trace->dictionarySize,
                                (unsigned long long)trace->uncompressedSize,
                                (unsigned long long)trace->compressedSize, duration, ratio, speed);
    if (length > 0 && (size_t)length < sizeof line) {
        ssize_t const written = write(fd, line, (size_t)length);
        (void)written;  // a trace line that cannot be written is dropped, as zstd's fprintf drops it
    }
}

// The hooks libzstd declares weak (lib/common/zstd_trace.h).
weir_trace_ctx ZSTD_trace_compress_begin(const ZSTD_CCtx *cctx);
void ZSTD_trace_compress_end(weir_trace_ctx ctx, const weir_zstd_trace *trace);
weir_trace_ctx ZSTD_trace_decompress_begin(const ZSTD_DCtx *dctx);
void ZSTD_trace_decompress_end(weir_trace_ctx ctx, const weir_zstd_trace *trace);

__attribute__((visibility("default"))) weir_trace_ctx ZSTD_trace_compress_begin(const ZSTD_CCtx *cctx) {
    (void)cctx;
    return frame_begins();
}

__attribute__((visibility("default"))) void ZSTD_trace_compress_end(weir_trace_ctx ctx, const weir_zstd_trace *trace) {
    frame_ends("compress", ctx, trace);
}

__attribute__((visibility("default"))) weir_trace_ctx ZSTD_trace_decompress_begin(const ZSTD_DCtx *dctx) {
    (void)dctx;
    return frame_begins();
}

__attribute__((visibility("default"))) void ZSTD_trace_decompress_end(weir_trace_ctx ctx, const weir_zstd_trace *trace) {
    frame_ends("decompress", ctx, trace);
}
