#ifndef WEIR_SYNC_FS_H
#define WEIR_SYNC_FS_H

/// syncfs(2): writes back every dirty page and inode of the file system that
/// holds `fd`, in one journal commit; 0, or -1 with errno set. (glibc declares
/// it only under _GNU_SOURCE, which Swift's Glibc module does not define.)
int weir_syncfs(int fd);

#endif
