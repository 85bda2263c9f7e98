#define _GNU_SOURCE
#include "sync_fs.h"

#include <unistd.h>

int weir_syncfs(int fd) {
    return syncfs(fd);
}
