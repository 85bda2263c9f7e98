import Testing
@testable import WeirFormats
@testable import WeirPipeline
@testable import WeirSystem

/// How many workers a run gets under the limits of a container.
@Suite("Worker plan")
struct WorkerPlanTests {
    @Test("without -T: one worker per available core, and the limit that chose them")
    func cores() {
        let host = WorkerPlan.compression(CompressionOptions(), limits: ProcessLimits(onlineCores: 64))
        #expect(host.workers == 64)
        #expect(host.reason == .onlineCores(64))
        // docker run --cpus=2 -m 256m on a 64-core host.
        let container = ProcessLimits(onlineCores: 64, affinityCores: 64, cpuQuota: 2, memoryLimit: 256 << 20)
        let plan = WorkerPlan.compression(CompressionOptions(), limits: container)
        #expect(plan.workers == 2)
        #expect(plan.reason == .cpuQuota(2))
        #expect(plan.chunkSize == nil)
        #expect(plan.estimatedPeak <= 128 << 20)
        let pinned = WorkerPlan.compression(
            CompressionOptions(), limits: ProcessLimits(onlineCores: 2, affinityCores: 1))
        #expect(pinned.workers == 1)
        #expect(pinned.reason == .affinity(cores: 1, online: 2))
        // --auto-threads=physical counts other cores.
        #expect(
            WorkerPlan.compression(CompressionOptions(), limits: ProcessLimits(onlineCores: 8), cores: 4).workers == 4)
    }

    @Test("a memory limit: as many workers as keep the estimate under half of it")
    func memory() {
        let limits = ProcessLimits(onlineCores: 64, memoryLimit: 1 << 30)
        let plan = WorkerPlan.compression(CompressionOptions(level: 19), limits: limits)
        #expect(plan.reason == .memoryLimit(1 << 30))
        #expect(plan.workers > 1 && plan.workers < 64)
        #expect(plan.estimatedPeak <= 512 << 20)
        // -19's 64 MiB chunks gave way to the 8 MiB default before workers did.
        #expect(plan.chunkSize == CompressionOptions.defaultChunkSize)
        let planned = CompressionOptions(level: 19, chunkSize: CompressionOptions.defaultChunkSize)
        #expect(WorkerPlan.compressionPeak(planned, workers: plan.workers + 1) > 512 << 20)
        #expect(!plan.exceedsMemory)
    }

    @Test("a high level's chunk halves under a memory limit only as far as every core needs")
    func levelChunk() {
        let nineteen = CompressionOptions(level: 19)
        #expect(nineteen.chunkSize == 64 << 20)
        // Room for two workers with 64 MiB chunks: the level's chunk stays.
        let roomy = WorkerPlan.compression(nineteen, limits: ProcessLimits(onlineCores: 2, memoryLimit: 2 << 30))
        #expect(roomy.workers == 2)
        #expect(roomy.chunkSize == nil)
        // 512 MiB: two workers fit only with smaller chunks, not below 8 MiB.
        let tight = WorkerPlan.compression(nineteen, limits: ProcessLimits(onlineCores: 2, memoryLimit: 512 << 20))
        #expect(tight.workers == 2)
        let chunk = tight.chunkSize ?? 0
        #expect(chunk < 64 << 20 && chunk >= CompressionOptions.defaultChunkSize)
        #expect(tight.estimatedPeak <= 256 << 20)
        // -B keeps its chunk and gives up a worker instead.
        let fixed = WorkerPlan.compression(nineteen, limits: ProcessLimits(onlineCores: 2, memoryLimit: 512 << 20),
                                           chunkIsFixed: true)
        #expect(fixed.chunkSize == nil)
        #expect(fixed.workers == 1)
    }

    @Test("128 MiB: one worker, its chunks halved until it fits in three quarters (-19, --ultra -22)")
    func oneWorker() {
        let limits = ProcessLimits(onlineCores: 2, memoryLimit: 128 << 20)
        for level in [19, 22] {
            let plan = WorkerPlan.compression(CompressionOptions(level: level), limits: limits)
            #expect(plan.workers == 1)
            #expect(plan.reason == .memoryLimit(128 << 20))
            let chunk = plan.chunkSize ?? 0
            #expect(chunk < CompressionOptions.defaultChunkSize && chunk >= CompressionOptions.minimumSplitChunk)
            #expect(plan.estimatedPeak <= 96 << 20, "level \(level)")
        }
        // -B, --long and --rsyncable keep their chunks.
        let fixed = WorkerPlan.compression(CompressionOptions(level: 22), limits: limits, chunkIsFixed: true)
        #expect(fixed.workers == 1)
        #expect(fixed.chunkSize == nil)
        let long = WorkerPlan.compression(CompressionOptions(level: 19, longWindowLog: 27), limits: limits)
        #expect(long.workers == 1)
        #expect(long.chunkSize == nil)
        #expect(long.reason == .memoryLimit(128 << 20))
    }

    @Test("-T that the memory limit cannot hold runs as asked, and says so")
    func requested() {
        let limits = ProcessLimits(onlineCores: 2, memoryLimit: 128 << 20)
        let plan = WorkerPlan.compression(CompressionOptions(level: 19, threads: 4), limits: limits)
        #expect(plan.workers == 4)
        #expect(plan.reason == .requested)
        #expect(plan.chunkSize == nil)
        #expect(plan.exceedsMemory)
        #expect(!WorkerPlan.compression(CompressionOptions(level: 1, threads: 1), limits: limits).exceedsMemory)
        #expect(
            !WorkerPlan.compression(CompressionOptions(level: 19, threads: 4), limits: ProcessLimits(onlineCores: 2))
                .exceedsMemory)
    }

    @Test("the estimate grows with the level, the workers and the chunk; long-distance tables count")
    func estimate() {
        let level3 = WorkerPlan.compressionPeak(CompressionOptions(level: 3), workers: 2)
        let level19 = WorkerPlan.compressionPeak(CompressionOptions(level: 19), workers: 2)
        #expect(level19 > level3 + 100 << 20)
        #expect(WorkerPlan.compressionPeak(CompressionOptions(level: 19), workers: 3) > level19)
        let context = CompressionContext.estimatedSize(level: 19, windowLog: nil, longDistance: false,
                                                       parameters: CompressionParameters(), chunkSize: 8 << 20)
        // btultra2 at 8 MiB: a 2^24 chain table and a 2^22 hash table of 4-byte entries, and more.
        #expect(context > 80 << 20 && context < 90 << 20)
        let long = CompressionContext.estimatedSize(level: 19, windowLog: 27, longDistance: true,
                                                    parameters: CompressionParameters(), chunkSize: 20_000_000)
        let short = CompressionContext.estimatedSize(level: 19, windowLog: 27, longDistance: false,
                                                     parameters: CompressionParameters(), chunkSize: 20_000_000)
        #expect(long > short)
    }

    @Test("decompressing: under a small limit, -M is half of it less weir's own; -M and --long win")
    func decompression() {
        let limits = ProcessLimits(onlineCores: 2, memoryLimit: 128 << 20)
        let plan = WorkerPlan.decompression(DecompressionOptions(), limits: limits)
        #expect(plan.decompressionMemory == 48 << 20)
        #expect(plan.workers == 2)
        #expect(plan.estimatedPeak <= 64 << 20)
        #expect(WorkerPlan.decompression(DecompressionOptions(memoryLimit: 200 << 20), limits: limits)
            .decompressionMemory == nil)
        #expect(WorkerPlan.decompression(DecompressionOptions(longWindowLog: 27), limits: limits)
            .decompressionMemory == nil)
        // A large limit keeps the defaults and counts the workers' buffers.
        let large = WorkerPlan.decompression(
            DecompressionOptions(), limits: ProcessLimits(onlineCores: 64, memoryLimit: 256 << 20))
        #expect(large.decompressionMemory == nil)
        #expect(large.reason == .memoryLimit(256 << 20))
        #expect(large.estimatedPeak <= 128 << 20)
        #expect(WorkerPlan.decompression(DecompressionOptions(), limits: ProcessLimits(onlineCores: 2)).workers == 2)
        // Large frames' budget stays within the share, and is left alone without a limit.
        #expect(plan.largeFrameBudget == 64 << 20 - WorkerPlan.processBytes - DecompressionOptions.readingReserve)
        #expect(large.largeFrameBudget == 128 << 20 - WorkerPlan.processBytes - DecompressionOptions.readingReserve)
        #expect(
            WorkerPlan.decompression(
                DecompressionOptions(), limits: ProcessLimits(onlineCores: 2, memoryLimit: 8 << 30)
            )
            .largeFrameBudget == nil)
        #expect(
            WorkerPlan.decompression(DecompressionOptions(), limits: ProcessLimits(onlineCores: 2)).largeFrameBudget
                == nil)
    }
}
