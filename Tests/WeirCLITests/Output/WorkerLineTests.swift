import Testing
import Weir
import WeirCLI

/// What -v says about the workers, and the warning for a -T that does not fit.
@Suite("worker line")
struct WorkerLineTests {
    @Test("the count, then which limit chose it")
    func reasons() {
        #expect(WorkerLine.text(WorkerPlan(workers: 2, reason: .onlineCores(2))) == "2 workers (2 cores online)")
        #expect(WorkerLine.text(WorkerPlan(workers: 1, reason: .affinity(cores: 1, online: 2)))
            == "1 worker (affinity: 1 of 2 cores)")
        #expect(WorkerLine.text(WorkerPlan(workers: 2, reason: .cpuQuota(1.5))) == "2 workers (CPU quota 1.5 cores)")
        #expect(WorkerLine.text(WorkerPlan(workers: 1, reason: .cpuQuota(1))) == "1 worker (CPU quota 1 core)")
        #expect(WorkerLine.text(WorkerPlan(workers: 4, reason: .requested)) == "4 workers (-T4)")
        #expect(WorkerLine.text(WorkerPlan(workers: 1, reason: .memoryLimit(128 << 20), chunkSize: 4 << 20,
                                           memoryLimit: 128 << 20, estimatedPeak: 81 << 20))
            == "1 worker, 4.00 MiB frames (memory limit 128.0 MiB, about 81.00 MiB)")
        #expect(
            WorkerLine.text(
                WorkerPlan(workers: 2, reason: .cpuQuota(2), memoryLimit: 256 << 20, estimatedPeak: 40 << 20))
                == "2 workers (CPU quota 2 cores, memory limit 256.0 MiB, about 40.00 MiB)")
        var decompression = WorkerPlan(
            workers: 2, reason: .onlineCores(2), memoryLimit: 128 << 20, estimatedPeak: 64 << 20)
        decompression.decompressionMemory = 48 << 20
        #expect(WorkerLine.text(decompression)
            == "2 workers (2 cores online, memory limit 128.0 MiB, about 64.00 MiB, -M 48.00 MiB)")
    }

    @Test("-v shows the line when a limit chose the count or a memory limit is set; -vv always")
    func notable() {
        #expect(!WorkerLine.isNotable(WorkerPlan(workers: 2, reason: .onlineCores(2))))
        #expect(!WorkerLine.isNotable(WorkerPlan(workers: 4, reason: .requested)))
        #expect(WorkerLine.isNotable(WorkerPlan(workers: 4, reason: .requested, memoryLimit: 1 << 30)))
        #expect(WorkerLine.isNotable(WorkerPlan(workers: 1, reason: .affinity(cores: 1, online: 2))))
        #expect(WorkerLine.isNotable(WorkerPlan(workers: 2, reason: .cpuQuota(1.5))))
        #expect(WorkerLine.isNotable(WorkerPlan(workers: 1, reason: .memoryLimit(128 << 20), memoryLimit: 128 << 20)))
    }

    @Test("a warning only for workers asked for that the memory limit cannot hold")
    func warning() {
        let over = WorkerPlan(workers: 4, reason: .requested, memoryLimit: 128 << 20, estimatedPeak: 400 << 20)
        #expect(WorkerLine.warning(over)
            == "-T4: 4 workers need about 400.0 MiB, more than half the memory limit of 128.0 MiB; running them anyway")
        let one = WorkerPlan(workers: 1, reason: .requested, memoryLimit: 64 << 20, estimatedPeak: 538 << 20)
        #expect(WorkerLine.warning(one)
            == "-T1: 1 worker needs about 538.0 MiB, more than half the memory limit of 64.00 MiB; running it anyway")
        #expect(WorkerLine.warning(WorkerPlan(workers: 4, reason: .requested, memoryLimit: 1 << 30,
                                              estimatedPeak: 400 << 20)) == nil)
        #expect(WorkerLine.warning(WorkerPlan(workers: 4, reason: .requested)) == nil)
        #expect(WorkerLine.warning(WorkerPlan(workers: 1, reason: .memoryLimit(128 << 20), memoryLimit: 128 << 20,
                                              estimatedPeak: 100 << 20)) == nil)
    }
}
