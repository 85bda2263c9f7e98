#define _GNU_SOURCE
#include "readiness.h"

#include <fcntl.h>
#include <sys/ioctl.h>

long weir_bytes_readable(int fd) {
    int count = 0;
    if (ioctl(fd, FIONREAD, &count) != 0) return -1;
    return count;
}

long weir_grow_pipe(int fd, long size) {
    int current = fcntl(fd, F_GETPIPE_SZ);
    if (current < 0) return -1;
    if (current >= size) return current;
    int grown = fcntl(fd, F_SETPIPE_SZ, (int)size);
    return grown < 0 ? current : grown;
}
