#define _GNU_SOURCE
#include "rename_noreplace.h"

#include <fcntl.h>
#include <stdio.h>

int weir_rename_noreplace(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}
