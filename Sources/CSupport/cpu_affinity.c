#define _GNU_SOURCE
#include "cpu_affinity.h"

#include <errno.h>
#include <sched.h>

int weir_affinity_cpu_count(void) {
    // The kernel's mask may be larger than glibc's 1024-bit cpu_set_t:
    // EINVAL asks for a larger one (as Rust's available_parallelism does).
    for (int cpus = 1024; cpus <= (1 << 20); cpus *= 2) {
        cpu_set_t *set = CPU_ALLOC(cpus);
        if (set == NULL) return 0;
        size_t size = CPU_ALLOC_SIZE(cpus);
        CPU_ZERO_S(size, set);
        if (sched_getaffinity(0, size, set) == 0) {
            int count = CPU_COUNT_S(size, set);
            CPU_FREE(set);
            return count;
        }
        CPU_FREE(set);
        if (errno != EINVAL) return 0;
    }
    return 0;
}
