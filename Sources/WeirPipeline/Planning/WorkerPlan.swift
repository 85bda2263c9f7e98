import WeirFormats
import WeirSystem

/// How many workers a run gets, and which limit chose that number: the
/// cores the process may use (``ProcessLimits``), or the memory it may hold.
///
/// Under a memory limit (a cgroup's), a run without an explicit worker count
/// starts no more workers than keep its estimated peak under half the limit
/// (``memoryShare``): the other half is the headroom the estimate does not
/// see (the page cache the cgroup is charged for, the output file's dirty
/// pages, other processes of the group). At least one worker always runs;
/// when even one would not fit in three quarters of the limit, its chunks
/// (frames) halve, down to ``CompressionOptions/minimumSplitChunk``, unless
/// their size was asked for (`-B`, `--long`'s window, `--rsyncable`).
/// Before any worker is given up, a high level's larger chunk halves down
/// to ``CompressionOptions/defaultChunkSize`` (8 MiB) while that lets more
/// cores work.
/// An explicit count runs as asked, and says whether it fits.
package struct WorkerPlan: Sendable, Equatable {
    /// What chose ``workers``.
    package enum Reason: Sendable, Equatable {
        /// Asked for (`-T N`).
        case requested
        /// One per online core.
        case onlineCores(Int)
        /// One per core of the affinity mask (a cpuset).
        case affinity(cores: Int, online: Int)
        /// The cgroup's CPU quota, in cores.
        case cpuQuota(Double)
        /// The memory limit, in bytes.
        case memoryLimit(Int)
    }

    /// The workers to run.
    package var workers: Int
    /// Why that many.
    package var reason: Reason
    /// The chunk size the memory limit brought down, or nil when it kept the
    /// options' own.
    package var chunkSize: Int?
    /// Decompressing: the `-M` the memory limit implies (``memoryShare`` of
    /// it, less ``processBytes``), when it is below libzstd's default window (128 MiB) and no `-M`
    /// or `--long` was given; nil otherwise. It bounds both the window a
    /// frame may use and the memory in flight
    /// (``DecompressionOptions/memoryLimit``).
    package var decompressionMemory: Int?
    /// Decompressing: the most the budget may grow to for large frames
    /// (``DecompressionOptions/largeFrameBudget``) under the memory limit,
    /// when that is below the default; nil otherwise.
    package var largeFrameBudget: Int?
    /// The memory limit the plan followed, or nil without one.
    package var memoryLimit: Int?
    /// The estimated peak of the run as planned, in bytes.
    package var estimatedPeak: Int
    /// Whether the workers asked for are estimated to take more than
    /// ``memoryShare`` of the memory limit (the command line warns once).
    package var exceedsMemory: Bool {
        guard let memoryLimit else { return false }
        return estimatedPeak > Int(Double(memoryLimit) * Self.memoryShare)
    }

    package init(workers: Int, reason: Reason, chunkSize: Int? = nil, memoryLimit: Int? = nil, estimatedPeak: Int = 0) {
        self.workers = workers
        self.reason = reason
        self.chunkSize = chunkSize
        self.memoryLimit = memoryLimit
        self.estimatedPeak = estimatedPeak
    }

    /// The part of a memory limit that the estimated peak may take.
    package static let memoryShare = 0.5

    /// The part of a memory limit that one worker alone may take before its
    /// chunks shrink: one worker cannot be made fewer, and the estimate is
    /// an upper bound (output buffers at their bound, the whole chunk
    /// resident): `-19 -T1` on 8 MiB chunks estimates 129 MiB and peaks at
    /// 91 MiB of cgroup memory (bench/results/2026-11-25-containers.md).
    package static let singleWorkerShare = 0.75

    /// weir's own memory besides the run's buffers and contexts: 14 MiB of
    /// peak RSS compressing 1 KB at `-1 -T1` (static release build, jemalloc).
    package static let processBytes = 16 << 20

    /// `options` as this process runs them, and the plan that chose their
    /// workers: ``CompressionOptions/threads`` when given (not 0), else the
    /// plan's, with the chunk the memory limit brought down and that limit
    /// (`CompressionOptions/memoryLimit`). ``Compressor``
    /// applies it to every run, so a program in a container gets what the
    /// `weir` command gets; the command applies it once, with its flags.
    ///
    /// - Parameters:
    ///   - chunkIsFixed: whether the chunk size was asked for, so that the
    ///     memory limit may not shrink it; nil: whether it differs from the
    ///     level's default (``CompressionOptions/defaultChunkSize(level:)``).
    ///   - cores: the cores to count instead of the available ones.
    package static func applied(to options: CompressionOptions, limits: ProcessLimits = .current,
                                chunkIsFixed: Bool? = nil,
                                cores: Int? = nil) -> (options: CompressionOptions, plan: WorkerPlan) {
        var planned = options
        let fixed = chunkIsFixed ?? (options.chunkSize != CompressionOptions.defaultChunkSize(level: options.level))
        let plan = compression(options, limits: limits, chunkIsFixed: fixed, cores: cores)
        planned.threads = plan.workers
        planned.memoryLimit = limits.memoryLimit
        if let chunkSize = plan.chunkSize { planned.chunkSize = chunkSize }
        return (planned, plan)
    }

    /// `options` as this process runs them, and the plan that chose their
    /// workers: ``DecompressionOptions/threads`` when given, else the
    /// plan's; without a ``DecompressionOptions/memoryLimit``, the one a
    /// cgroup's limit implies (``decompressionMemory``), and the large
    /// frames' budget within it. ``Decompressor`` applies it to every run.
    package static func applied(to options: DecompressionOptions, limits: ProcessLimits = .current,
                                cores: Int? = nil) -> (options: DecompressionOptions, plan: WorkerPlan) {
        var planned = options
        let plan = decompression(options, limits: limits, cores: cores)
        planned.threads = plan.workers
        if planned.memoryLimit == nil { planned.memoryLimit = plan.decompressionMemory }
        if let largest = plan.largeFrameBudget { planned.largeFrameBudget = min(largest, planned.largeFrameBudget) }
        return (planned, plan)
    }

    /// The plan for compressing with `options`: `options.threads` when
    /// given (not 0), else one worker per available core, fewer under a
    /// memory limit.
    ///
    /// - Parameters:
    ///   - options: the threads, level, chunk and window asked for.
    ///   - limits: the process's cores and memory.
    ///   - chunkIsFixed: whether the chunk size was asked for (`-B`), so
    ///     that the memory limit may not shrink it.
    ///   - available: the cores to count instead of ``ProcessLimits/availableCores``
    ///     (`--auto-threads=physical`).
    package static func compression(_ options: CompressionOptions, limits: ProcessLimits, chunkIsFixed: Bool = false,
                                   cores available: Int? = nil) -> WorkerPlan {
        let requested = options.threads > 0
        let cores = requested ? options.threads : available ?? limits.availableCores
        var plan = WorkerPlan(workers: cores, reason: requested ? .requested : coreReason(limits),
                              memoryLimit: limits.memoryLimit)
        plan.estimatedPeak = compressionPeak(options, workers: cores)
        guard let limit = limits.memoryLimit, !requested else { return plan }
        let fixed = chunkIsFixed || options.longWindowLog != nil || options.rsyncable
        var shrunk = options
        // A high level's chunk (above the 8 MiB default) gives way before a
        // worker does: halved, not below the default, until every core fits.
        while !fixed, shrunk.chunkSize / 2 >= CompressionOptions.defaultChunkSize {
            var trial = plan
            trial.fit(under: limit) { compressionPeak(shrunk, workers: $0) }
            if trial.workers == cores { break }
            shrunk.chunkSize /= 2
            plan.chunkSize = shrunk.chunkSize
            plan.reason = .memoryLimit(limit)
        }
        plan.fit(under: limit) { compressionPeak(shrunk, workers: $0) }
        shrunk.threads = plan.workers
        while !fixed, plan.workers == 1, shrunk.chunkSize / 2 >= CompressionOptions.minimumSplitChunk,
              compressionPeak(shrunk, workers: 1) > Int(Double(limit) * singleWorkerShare) {
            shrunk.chunkSize /= 2
            plan.chunkSize = shrunk.chunkSize
            plan.reason = .memoryLimit(limit)
        }
        plan.estimatedPeak = compressionPeak(shrunk, workers: plan.workers)
        return plan
    }

    /// Lowers ``workers`` to the most, at least one, whose `peak` stays
    /// under ``memoryShare`` of `limit`, saying that the limit chose them.
    private mutating func fit(under limit: Int, peak: (Int) -> Int) {
        let budget = Int(Double(limit) * Self.memoryShare)
        var fitted = 1
        while fitted < workers && peak(fitted + 1) <= budget { fitted += 1 }
        if fitted < workers {
            workers = fitted
            reason = .memoryLimit(limit)
        }
    }

    /// The plan for decompressing with `options`: `options.threads` when
    /// given, else one worker per available core, fewer under a memory
    /// limit: each worker holds one 8 MiB frame's output
    /// (``DecompressionOptions/inFlightBudget``). Under a limit whose
    /// share is below the default window, ``decompressionMemory`` is that
    /// share: it then bounds the memory whatever the workers.
    package static func decompression(_ options: DecompressionOptions, limits: ProcessLimits,
                                     cores: Int? = nil) -> WorkerPlan {
        let requested = options.threads > 0
        let count = requested ? options.threads : cores ?? limits.availableCores
        var plan = WorkerPlan(workers: count, reason: requested ? .requested : coreReason(limits),
                              memoryLimit: limits.memoryLimit)
        var sized = options
        if let limit = limits.memoryLimit, options.memoryLimit == nil, options.longWindowLog == nil {
            // weir's own memory comes out of the share, so that the peak fits it.
            let share = Int(Double(limit) * memoryShare)
            if share < Int(WindowLimit.defaultBytes) {
                sized.memoryLimit = max(DecompressionOptions.readingReserve, share - processBytes)
                plan.decompressionMemory = sized.memoryLimit
            }
        }
        if let limit = limits.memoryLimit {
            // Large frames' budget stays within the share too.
            let room = Int(Double(limit) * memoryShare) - processBytes - DecompressionOptions.readingReserve
            if room < options.largeFrameBudget { plan.largeFrameBudget = max(0, room) }
        }
        plan.estimatedPeak = decompressionPeak(sized, workers: count)
        guard let limit = limits.memoryLimit, !requested else { return plan }
        plan.fit(under: limit) { decompressionPeak(sized, workers: $0) }
        plan.estimatedPeak = decompressionPeak(sized, workers: plan.workers)
        return plan
    }

    /// The estimated peak of a compression run with `workers`: weir itself
    /// (``processBytes``), one libzstd context per worker
    /// (`CompressionContext.estimatedSize`), and for each chunk in flight
    /// (``CompressionOptions/resolvedChunksInFlight``) the chunk, read or
    /// mapped in, and its output buffer (`compressBound`), both counted
    /// whole; with `verify`, one chunk more per worker (its check's buffer).
    package static func compressionPeak(_ options: CompressionOptions, workers: Int) -> Int {
        var sized = options
        sized.threads = workers
        let chunk = sized.resolvedChunkSize
        let largest = sized.rsyncable ? 2 * chunk : chunk
        // Under --adapt, a context may go up to the range's top level.
        let level = sized.adaptiveLevels.map { max(sized.level, $0.upperBound) } ?? sized.level
        let context = CompressionContext.estimatedSize(
            level: level, windowLog: sized.windowLog(atLevel: level), longDistance: sized.longWindowLog != nil,
            parameters: sized.parameters, chunkSize: chunk)
        let verification = sized.verify ? largest : 0
        return processBytes + workers * (context + verification)
            + sized.resolvedChunksInFlight * (largest + Zstd.compressBound(largest))
    }

    /// The estimated peak of a decompression run with `workers`: weir itself
    /// and the budget ``DecompressionOptions/inFlightBudget`` holds, with
    /// the compressed bytes it leaves to the reading side
    /// (``DecompressionOptions/readingReserve``).
    package static func decompressionPeak(_ options: DecompressionOptions, workers: Int) -> Int {
        var sized = options
        sized.threads = workers
        return processBytes + sized.inFlightBudget + DecompressionOptions.readingReserve
    }

    private static func coreReason(_ limits: ProcessLimits) -> Reason {
        switch limits.coreLimit {
        case .online: .onlineCores(limits.onlineCores)
        case .affinity: .affinity(cores: limits.availableCores, online: limits.onlineCores)
        case .cpuQuota: .cpuQuota(limits.cpuQuota ?? Double(limits.availableCores))
        }
    }
}
