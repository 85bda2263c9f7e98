#ifndef WEIR_ALLOCATOR_H
#define WEIR_ALLOCATOR_H

/// The version of jemalloc ("5.3.0-0-g…") when it serves the process's
/// malloc, or NULL when another allocator does (a sanitizer's, under
/// ASan/TSan, whose malloc takes precedence).
const char *weir_allocator_version(void);

/// Gives the kernel back the pages of freed memory jemalloc keeps for
/// reuse (its settings keep them otherwise): for a long-lived process
/// after a peak of memory it will not need again (`weir mount`, once its
/// tree is built). Nothing under another allocator.
void weir_allocator_purge(void);

/// Lets jemalloc give the kernel back freed pages left unused for
/// `milliseconds` (0: at once), where its settings keep them for reuse: for
/// a long-lived process whose memory must stay near what it holds (`weir
/// mount`, whose frames come and go). Nothing under another allocator.
void weir_allocator_keep_freed(long milliseconds);

/// Under glibc's allocator (no jemalloc linked: the debug builds), every
/// block of 128 KiB or more mapped on its own and unmapped when freed: a
/// fixed threshold, not glibc's default that rises with each large block
/// freed and then keeps freed frames and decoders in each thread's arena,
/// resident (a mount's memory would be its threads' past peaks, not what it
/// holds). Under jemalloc, nothing (its decay settings decide).
void weir_allocator_return_large_at_once(void);

#endif
