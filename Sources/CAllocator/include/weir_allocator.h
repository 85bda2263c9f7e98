#ifndef WEIR_ALLOCATOR_H
#define WEIR_ALLOCATOR_H

/// The version of jemalloc ("5.3.0-0-g…") when it serves the process's
/// malloc, or NULL when another allocator does (a sanitizer's, under
/// ASan/TSan, whose malloc takes precedence).
const char *weir_allocator_version(void);

#endif
