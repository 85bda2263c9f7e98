#ifndef WEIR_PAGE_CACHE_H
#define WEIR_PAGE_CACHE_H

/// The number of pages of the file open as `fd` that are dirty or under
/// writeback in the page cache, from the `cachestat` system call (Linux 6.5
/// and later), which glibc does not wrap yet. Returns -1 with errno set
/// (ENOSYS on older kernels).
long long weir_unwritten_pages(int fd);

#endif
