#ifndef WEIR_READINESS_H
#define WEIR_READINESS_H

/// The bytes that a read() of `fd` would return now without blocking
/// (ioctl FIONREAD), or -1 when the descriptor cannot tell (a device, for
/// example). Swift does not import the variadic ioctl().
long weir_bytes_readable(int fd);

/// Raises the capacity of the pipe `fd` to at least `size` bytes
/// (fcntl F_SETPIPE_SZ, which glibc declares only under _GNU_SOURCE).
/// Returns the capacity now (unchanged when the kernel refused), or -1 when
/// `fd` is not a pipe. A `size` of 0 only reads the capacity.
long weir_grow_pipe(int fd, long size);

#endif
