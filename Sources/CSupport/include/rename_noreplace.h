#ifndef WEIR_RENAME_NOREPLACE_H
#define WEIR_RENAME_NOREPLACE_H

/// renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE), which glibc
/// declares only under _GNU_SOURCE. Returns 0, or -1 with errno set.
int weir_rename_noreplace(const char *from, const char *to);

#endif
