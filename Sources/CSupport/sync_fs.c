#define _GNU_SOURCE
#include "sync_fs.h"

#include <fcntl.h>
#include <unistd.h>

int weir_syncfs(int fd) {
    return syncfs(fd);
}

int weir_wait_written(int fd) {
    return sync_file_range(fd, 0, 0,
                           SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
}

int weir_start_writeback(int fd, long long offset, long long length) {
    return sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE);
}
