#define _GNU_SOURCE
#include "memory_file.h"

#include <sys/mman.h>

int weir_memory_file(const char *name) {
    return memfd_create(name, MFD_CLOEXEC);
}
