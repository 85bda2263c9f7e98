#ifndef WEIR_SYNC_FS_H
#define WEIR_SYNC_FS_H

/// syncfs(2): writes back every dirty page and inode of the file system that
/// holds `fd` and commits its journal; 0, or -1 with errno set. (glibc
/// declares it only under _GNU_SOURCE, which Swift's Glibc module does not
/// define.)
int weir_syncfs(int fd);

/// sync_file_range(2) over the whole file, waiting before and after the
/// write: once a syncfs has written the file, a check that costs no journal
/// commit and no device flush, and reports the file's own write error (EIO,
/// ENOSPC) if its writeback failed; 0, or -1 with errno set.
int weir_wait_written(int fd);

/// sync_file_range(2) with SYNC_FILE_RANGE_WRITE: starts writing the dirty
/// pages of that range to disk without waiting for them (it may wait while
/// the device's queue is full); 0, or -1 with errno set.
int weir_start_writeback(int fd, long long offset, long long length);

#endif
