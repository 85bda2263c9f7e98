#ifndef WEIR_CPU_AFFINITY_H
#define WEIR_CPU_AFFINITY_H

/// The number of CPUs in the calling thread's affinity mask
/// (sched_getaffinity, CPU_COUNT_S), or 0 when it cannot be read. glibc
/// declares both only under _GNU_SOURCE, which Swift's Glibc module does not
/// define. A cpuset cgroup narrows this mask too (taskset, docker --cpuset-cpus).
int weir_affinity_cpu_count(void);

#endif
