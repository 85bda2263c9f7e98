#if canImport(Glibc)
import Glibc
#endif

/// The process's CPU time and peak resident memory so far (`getrusage`).
struct ResourceUsage {
    var cpuSeconds: Double
    var peakResidentBytes: Int

    static func current() -> ResourceUsage {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        return ResourceUsage(cpuSeconds: cpu, peakResidentBytes: Int(usage.ru_maxrss) * 1024)
    }
}
