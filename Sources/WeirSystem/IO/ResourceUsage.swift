import Glibc

/// The process's CPU time and peak resident memory so far (`getrusage`).
///
/// Both are for the whole process: a run's CPU time is the difference of two
/// readings taken around it (``Statistics/measuringUsage(since:now:)``).
package struct ResourceUsage: Sendable, Equatable {
    /// User plus system CPU seconds of every thread so far.
    package var cpuSeconds: Double
    /// The largest resident set the process has had, in bytes.
    package var peakResidentBytes: Int

    /// Creates a reading by hand (for tests).
    package init(cpuSeconds: Double, peakResidentBytes: Int) {
        self.cpuSeconds = cpuSeconds
        self.peakResidentBytes = peakResidentBytes
    }

    /// Reads the process's usage now. The corresponding C function is `getrusage`.
    package static func current() -> ResourceUsage { reading(__rusage_who_t(RUSAGE_SELF.rawValue)) }

    /// The calling thread's CPU time (and the process's peak memory): the
    /// CPU of a job that runs entirely on this thread while other threads
    /// run other jobs (several files at once).
    package static func currentThread() -> ResourceUsage { reading(rusageThread) }

    /// Linux's `RUSAGE_THREAD` (1), which Glibc's module does not import (it needs _GNU_SOURCE).
    private static let rusageThread: __rusage_who_t = 1

    private static func reading(_ who: __rusage_who_t) -> ResourceUsage {
        var usage = rusage()
        getrusage(who, &usage)
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        return ResourceUsage(cpuSeconds: cpu, peakResidentBytes: Int(usage.ru_maxrss) * 1024)
    }
}
