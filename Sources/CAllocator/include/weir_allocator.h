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

#endif
