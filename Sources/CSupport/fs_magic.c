#include "fs_magic.h"

#include <sys/vfs.h>

unsigned long weir_fs_magic(int fd) {
    struct statfs info;
    return fstatfs(fd, &info) == 0 ? (unsigned long)(unsigned int)info.f_type : 0;
}

unsigned long weir_fs_magic_path(const char *path) {
    struct statfs info;
    return statfs(path, &info) == 0 ? (unsigned long)(unsigned int)info.f_type : 0;
}
