import ArgumentParser
import Glibc
import Weir
import WeirCLI

/// The compression the flags ask for: the level, the options, the workers
/// the limits allow, and what -v and --show-default-cparams say of them.
extension RunSettings {
    /// Says once how many workers the run has and which limit chose them
    /// (-v when a limit did, -vv always), and warns when the -T asked for
    /// cannot fit the memory limit.
    func showWorkers(_ plan: WorkerPlan, console: Console) {
        if let warning = WorkerLine.warning(plan) { console.warning(warning) }
        let shown = reporting.verbose >= 2 || (reporting.verbose == 1 && WorkerLine.isNotable(plan))
        if shown { console.write("weir: \(WorkerLine.text(plan))\n") }
    }

    /// What zstd prints of the parameters before compressing: with
    /// `--show-default-cparams`, libzstd's for the level and each file's
    /// size; with `-vv`, the `--zstd=` line of what weir uses, for a frame
    /// of the file (at most a chunk).
    func showParameters(of inputs: [String], _ compression: CompressionOptions, console: Console) {
        guard compressionSettings.showsDefaultParameters || reporting.verbose >= 2 else { return }
        let dictionarySize = compression.dictionary?.bytes.count ?? 0
        for input in inputs {
            let status = input == "-" ? nil : FileStatus.of(path: input)
            let size = status?.isRegularFile == true ? status?.size : nil
            if compressionSettings.showsDefaultParameters {
                console.write(
                    ZstdParameterList.defaultsBlock(
                        name: FileName.displayed(input), size: size,
                        CompressionParameters().resolved(
                            level: compression.level, size: size, dictionarySize: dictionarySize)))
            }
            if reporting.verbose >= 2 {
                let frame = size.map { min($0, compression.chunkSize) }
                var resolved = compression.parameters.resolved(level: compression.level, size: frame,
                                                               dictionarySize: dictionarySize)
                // As zstd's line: --long=N asks for a window of 2^N, unless --zstd=wlog= does.
                if compression.parameters.windowLog == nil, let long = compression.longWindowLog {
                    resolved.windowLog = long
                }
                console.write(ZstdParameterList.line(resolved) + "\n")
            }
        }
    }

    /// The compression level after `--fast`, `--ultra` and clamping
    /// (``LevelPolicy``), warning on `console` when it was clamped.
    func resolvedLevel(console: Console?) -> Int {
        let (level, warning) = compressionSettings.levelPolicy.resolved
        if let warning { console?.warning(warning) }
        return level
    }

    /// The compression options of the flags, with the chunk size that
    /// `--long` raises already resolved (so that reports show it), and the
    /// workers (and chunk size) of ``compressionPlan(level:dictionary:)``.
    func compressionOptions(level: Int, dictionary: ZstdDictionary? = nil) -> CompressionOptions {
        compressionPlan(level: level, dictionary: dictionary).options
    }

    /// The compression options of the flags and the plan that chose their
    /// workers: -T as given, else the cores this process may use, fewer
    /// (and, for one worker, smaller chunks) under a cgroup memory limit.
    func compressionPlan(
        level: Int, dictionary: ZstdDictionary? = nil
    ) -> (options: CompressionOptions, plan: WorkerPlan) {
        WorkerPlan.applied(to: flagCompressionOptions(level: level, dictionary: dictionary),
                           chunkIsFixed: compressionSettings.chunkSize != nil, cores: resourceSettings.countedCores)
    }

    /// The compression options as the flags give them (threads 0 without -T).
    private func flagCompressionOptions(level: Int, dictionary: ZstdDictionary?) -> CompressionOptions {
        // Content-defined cuts must not depend on the input's size, which
        // fitting a small file to the workers would make them do.
        var options = CompressionOptions(
            level: level, threads: resourceSettings.requestedThreads,
            chunkSize: compressionSettings.chunkSize,
            checksum: resourceSettings.verifiesChecksums,
            seekTable: compressionSettings.seekTable, mapInput: resourceSettings.mapsInput,
            splitSmallInputs: compressionSettings.chunkSize == nil && !compressionSettings.rsyncable,
            contentSize: compressionSettings.writesContentSize,
            streamSize: compressionSettings.streamSize,
            dictionary: dictionary, longWindowLog: dictionarySettings.long)
        options.rsyncable = compressionSettings.rsyncable
        options.memberIndex = compressionSettings.memberIndex
        // Every run of the command reads chunks whole (DispatchIOTuning).
        options.sizesReadBuffers = true
        options.parameters = compressionSettings.parameters ?? CompressionParameters()
        options.dictionaryID = dictionarySettings.writesID
        options.verify = resourceSettings.verify
        options.resumable = outputPolicy.resumes
        options.format = compressionSettings.format
        if let range = compressionSettings.adaptiveLevels {
            // As zstd: the level chosen, put in the range, is the first frame's.
            options.adaptiveLevels = range
            options.level = min(max(level, range.lowerBound), range.upperBound)
            options.resumable = false
            // Levels change frame by frame: the frame stays the 8 MiB of the
            // levels below 7 (the level's own, 64 MiB at -19, would leave a
            // 100 MB file two frames and nothing to adapt).
            if compressionSettings.chunkSize == nil { options.chunkSize = CompressionOptions.defaultChunkSize }
        }
        #if WEIR_TEST_HOOKS
        // The tests' way to show that --verify catches a flipped bit (test builds only).
        options.damagedFrameForTesting = getenv("WEIR_TEST_DAMAGE_FRAME").flatMap { Int(String(cString: $0)) }
        // The tests' way to make a compression slow enough to stop after a checkpoint (test builds only).
        options.frameDelayForTesting = getenv("WEIR_TEST_FRAME_DELAY").flatMap { Double(String(cString: $0)) }
        // The tests' way to slow a run, step by step, to watch its progress line.
        options.stepDelayForTesting = getenv("WEIR_TEST_STEP_DELAY").flatMap { Double(String(cString: $0)) }
        // The tests' way to stop a run after a step, to read its line at a known point.
        options.stepHoldForTesting = getenv("WEIR_TEST_STEP_HOLD").map { String(cString: $0) }
        // The tests' way to checkpoint sooner, so that a short run can be stopped after one.
        options.checkpointIntervalForTesting = getenv("WEIR_TEST_CHECKPOINT_INTERVAL")
            .flatMap { Double(String(cString: $0)) }.flatMap { $0 >= 0 ? $0 : nil }
        #endif
        options.chunkSize = options.resolvedChunkSize
        return options
    }
}
