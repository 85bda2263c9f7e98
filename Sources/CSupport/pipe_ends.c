#define _GNU_SOURCE
#include "pipe_ends.h"

#include <fcntl.h>
#include <unistd.h>

int weir_pipe_cloexec(int ends[2]) {
    return pipe2(ends, O_CLOEXEC);
}
