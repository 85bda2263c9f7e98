// The weir executable's allocator: jemalloc, linked in place of glibc's
// malloc, and its settings.
//
// Why: libdispatch reads every chunk into a fresh page-aligned buffer
// (posix_memalign of the read size) and frees it when the chunk is dropped.
// glibc either maps such a buffer anew each time (the kernel zeroes and
// faults in every page: 2,048 faults per 8 MiB) or, kept in its heap,
// fragments around the alignment padding until memory grows with the
// stream. jemalloc serves page-aligned sizes from page runs with no padding
// and reuses a freed run for the next buffer of the same size: no faults,
// and memory stays at the buffers in flight. Measurements: docs/pipes.md.
#include "weir_allocator.h"

#include <jemalloc/jemalloc.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

// Weak: debug builds do not link jemalloc (see Package.swift), and there
// mallctl is NULL.
#pragma weak mallctl

// Read by jemalloc before the first allocation:
// - narenas:1 — one arena for all threads: a buffer allocated on one GCD
//   thread and freed on another returns to the pool the next one is taken
//   from (per-thread arenas each kept a spare: +35 MiB);
// - oversize_threshold:0 — no separate arena for large sizes, whose freed
//   runs jemalloc would give back to the kernel at once;
// - dirty_decay_ms/muzzy_decay_ms:-1 — freed runs are kept for reuse rather
//   than given back over time: the program's memory is its peak in flight,
//   which the pipelines bound;
// - tcache:false — no per-thread cache: libdispatch keeps every worker
//   thread it ever started (about 50 on a busy 2-core machine, more as the
//   stream goes on), and each thread's cache kept spares of its own, so
//   memory grew with the stream (bench/results/2026-11-23-tcache-off.md);
//   weir makes a few thousand allocations a second, which one arena's lock
//   serves unnoticed.
const char *malloc_conf = "narenas:1,oversize_threshold:0,dirty_decay_ms:-1,muzzy_decay_ms:-1,tcache:false";

const char *weir_allocator_version(void) {
    // jemalloc counts what each thread allocates through it: if a malloc
    // does not move the count, another allocator (a sanitizer's) serves it.
    if (mallctl == NULL) return NULL;
    uint64_t before = 0, after = 0;
    size_t size = sizeof(uint64_t);
    if (mallctl("thread.allocated", &before, &size, NULL, 0) != 0) return NULL;
    void *volatile probe = malloc(1 << 16);
    if (mallctl("thread.allocated", &after, &size, NULL, 0) != 0) after = before;
    free(probe);
    if (after - before < (1 << 16)) return NULL;
    const char *version = NULL;
    size = sizeof(version);
    if (mallctl("version", (void *)&version, &size, NULL, 0) != 0) return NULL;
    return version;
}

void weir_allocator_purge(void) {
    if (mallctl == NULL) return;
    // MALLCTL_ARENAS_ALL: every arena (there is one).
    (void)mallctl("arena.4096.purge", NULL, NULL, NULL, 0);
}

void weir_allocator_keep_freed(long milliseconds) {
    if (mallctl == NULL) return;
    // The one arena (narenas:1): freed pages go back to the kernel after
    // `milliseconds` unused, rather than never.
    ssize_t decay = milliseconds;
    (void)mallctl("arena.0.dirty_decay_ms", NULL, NULL, &decay, sizeof(decay));
    (void)mallctl("arena.0.muzzy_decay_ms", NULL, NULL, &decay, sizeof(decay));
}

void weir_allocator_return_large_at_once(void) {
    if (mallctl != NULL) return;
    (void)mallopt(M_MMAP_THRESHOLD, 128 << 10);
}
