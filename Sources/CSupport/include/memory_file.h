#ifndef WEIR_MEMORY_FILE_H
#define WEIR_MEMORY_FILE_H

/// memfd_create(2) with MFD_CLOEXEC: a regular file in memory, with no name
/// in any folder (`-b` runs weir's file pipeline on it, without a disk);
/// its descriptor, or -1 with errno set. (glibc declares it only under
/// _GNU_SOURCE.)
int weir_memory_file(const char *name);

#endif
