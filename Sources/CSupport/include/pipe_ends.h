#ifndef WEIR_PIPE_ENDS_H
#define WEIR_PIPE_ENDS_H

/// Creates a pipe whose two ends are close-on-exec from the start
/// (pipe2 with O_CLOEXEC, which glibc declares only under _GNU_SOURCE).
/// Returns 0, or -1 with errno set, as pipe() does.
int weir_pipe_cloexec(int ends[2]);

#endif
