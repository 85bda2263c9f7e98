// The output ring of a frame decoded by blocks (zsplit.h, zs_ring).
#define _GNU_SOURCE
#include "zsplit.h"

#include <sys/mman.h>
#include <unistd.h>

int zs_ring_init(zs_ring *r, uint64_t bytes) {
    r->mid = NULL;
    r->size = 0;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (bytes > (uint64_t)SIZE_MAX / 4) return ZS_ERR_MEMORY;
    size_t size = ((size_t)bytes + page - 1) / page * page;
    int fd = memfd_create("weir-ring", MFD_CLOEXEC);
    if (fd < 0) return ZS_ERR_MEMORY;
    uint8_t *m = MAP_FAILED;
    if (ftruncate(fd, (off_t)size) == 0)
        m = mmap(NULL, 3 * size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    int ok = m != MAP_FAILED;
    for (int i = 0; ok && i < 3; i++)
        ok = mmap(m + i * size, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED;
    close(fd);
    if (!ok) {
        if (m != MAP_FAILED) munmap(m, 3 * size);
        return ZS_ERR_MEMORY;
    }
    r->mid = m + size;
    r->size = size;
    return 0;
}

void zs_ring_free(zs_ring *r) {
    if (r->mid) munmap(r->mid - r->size, 3 * r->size);
    r->mid = NULL;
    r->size = 0;
}
