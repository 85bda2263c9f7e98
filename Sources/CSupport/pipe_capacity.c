#define _GNU_SOURCE
#include "pipe_capacity.h"

#include <fcntl.h>

long weir_grow_pipe(int fd, long size) {
    int current = fcntl(fd, F_GETPIPE_SZ);
    if (current < 0) return -1;
    if (current >= size) return current;
    int grown = fcntl(fd, F_SETPIPE_SZ, (int)size);
    return grown < 0 ? current : grown;
}
