#ifndef WEIR_PEEK_PIPE_H
#define WEIR_PEEK_PIPE_H

#include <stddef.h>
#include <sys/types.h>

/// Copies up to `length` of the bytes waiting in the pipe `fd` into `buffer`
/// without taking them out of the pipe: tee(2) into a scratch pipe, then a
/// read of that. Blocks while the pipe is empty and has a writer (unless
/// `fd` is non-blocking: -1 with EAGAIN). Returns the bytes copied, 0 when
/// the pipe is empty and has no writer left, or -1 with errno set (EINVAL:
/// `fd` is not a pipe).
ssize_t weir_peek_pipe(int fd, void *buffer, size_t length);

#endif
