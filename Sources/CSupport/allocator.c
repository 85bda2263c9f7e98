#include "allocator.h"

#include <malloc.h>

int weir_keep_heap_buffers(int mmap_threshold, int trim_threshold) {
    int ok = mallopt(M_MMAP_THRESHOLD, mmap_threshold);
    ok &= mallopt(M_TRIM_THRESHOLD, trim_threshold);
    ok &= mallopt(M_ARENA_MAX, 1);
    return ok ? 0 : -1;
}
