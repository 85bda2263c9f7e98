#ifndef WEIR_THREAD_NAME_H
#define WEIR_THREAD_NAME_H

/// Names the calling thread (Linux keeps the first 15 bytes), for ps, top,
/// perf and debuggers. glibc declares pthread_setname_np only under
/// _GNU_SOURCE, which Swift's Glibc module does not define.
void weir_set_thread_name(const char *name);

#endif
