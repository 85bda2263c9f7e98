#ifndef WEIR_ALLOCATOR_H
#define WEIR_ALLOCATOR_H

/// Makes glibc serve allocations below `mmap_threshold` bytes from its heap,
/// keep up to `trim_threshold` free bytes at the heap's top rather than give
/// them back, and use one arena for every thread (mallopt; <malloc.h> is not
/// in Swift's Glibc module). Returns 0, or -1 if glibc refused a setting.
int weir_keep_heap_buffers(int mmap_threshold, int trim_threshold);

#endif
