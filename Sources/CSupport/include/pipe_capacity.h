#ifndef WEIR_PIPE_CAPACITY_H
#define WEIR_PIPE_CAPACITY_H

/// Raises the capacity of the pipe `fd` to at least `size` bytes
/// (fcntl F_SETPIPE_SZ, which glibc declares only under _GNU_SOURCE).
/// Returns the capacity now (unchanged when the kernel refused), or -1 when
/// `fd` is not a pipe. A `size` of 0 only reads the capacity.
long weir_grow_pipe(int fd, long size);

#endif
