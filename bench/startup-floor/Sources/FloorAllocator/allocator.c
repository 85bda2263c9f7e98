#include "floor_allocator.h"

// The settings weir's executable gives jemalloc (Sources/CAllocator), so the
// floor's allocator starts as weir's does.
const char *malloc_conf = "narenas:1,oversize_threshold:0,dirty_decay_ms:-1,muzzy_decay_ms:-1,tcache:false";

int floor_allocator_linked(void) { return 1; }
