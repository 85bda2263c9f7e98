#ifndef WEIR_FS_MAGIC_H
#define WEIR_FS_MAGIC_H

/// The file system type (statfs(2)'s f_type, linux/magic.h) of the file
/// open as `fd`, or 0 when fstatfs fails. (Swift's Glibc module does not
/// export sys/vfs.h.)
unsigned long weir_fs_magic(int fd);

/// The same, of the file at `path` (links followed).
unsigned long weir_fs_magic_path(const char *path);

#endif
