#define _GNU_SOURCE
#include "peek_pipe.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

ssize_t weir_peek_pipe(int fd, void *buffer, size_t length) {
    int scratch[2];
    if (pipe2(scratch, O_CLOEXEC) != 0) return -1;
    ssize_t copied;
    do {
        copied = tee(fd, scratch[1], length, 0);
    } while (copied < 0 && errno == EINTR);
    ssize_t result = copied;
    size_t done = 0;
    while (copied > 0 && done < (size_t)copied) {
        ssize_t got = read(scratch[0], (char *)buffer + done, (size_t)copied - done);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) { result = -1; break; }
        done += (size_t)got;
    }
    int saved = errno;
    close(scratch[0]);
    close(scratch[1]);
    errno = saved;
    return result;
}
