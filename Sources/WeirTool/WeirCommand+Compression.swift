import ArgumentParser
import Glibc
import Weir
import WeirCLI

/// The compression the flags ask for: the level, the options, the workers
/// the limits allow, and what -v and --show-default-cparams say of them.
extension WeirCommand {
    /// Says once how many workers the run has and which limit chose them
    /// (-v when a limit did, -vv always), and warns when the -T asked for
    /// cannot fit the memory limit.
    func showWorkers(_ plan: WorkerPlan, console: Console) {
        if let warning = WorkerLine.warning(plan) { console.warning(warning) }
        let shown = messageFlags.verbose >= 2 || (messageFlags.verbose == 1 && WorkerLine.isNotable(plan))
        if shown { console.write("weir: \(WorkerLine.text(plan))\n") }
    }

    /// What zstd prints of the parameters before compressing: with
    /// `--show-default-cparams`, libzstd's for the level and each file's
    /// size; with `-vv`, the `--zstd=` line of what weir uses, for a frame
    /// of the file (at most a chunk).
    func showParameters(of inputs: [String], _ compression: CompressionOptions, console: Console) {
        guard compressionFlags.showDefaultCParams || messageFlags.verbose >= 2 else { return }
        let dictionarySize = compression.dictionary?.bytes.count ?? 0
        for input in inputs {
            let status = input == "-" ? nil : FileStatus.of(path: input)
            let size = status?.isRegularFile == true ? status?.size : nil
            if compressionFlags.showDefaultCParams {
                console.write(
                    ZstdParameterList.defaultsBlock(
                        name: FileName.displayed(input), size: size,
                        CompressionParameters().resolved(
                            level: compression.level, size: size, dictionarySize: dictionarySize)))
            }
            if messageFlags.verbose >= 2 {
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

    /// `--adapt`'s range of levels: zstd's whole range, narrowed by each
    /// `--adapt=` list in turn (checked by validateFacts()), within
    /// libzstd's levels; nil without `--adapt`.
    var adaptiveLevels: ClosedRange<Int>? {
        guard compressionFlags.adapt else { return nil }
        var range = Zstd.minLevel...Zstd.maxLevel
        for list in facts.adaptLists {
            if let read = AdaptParameterList.parse(list, over: range) { range = read }
        }
        let level = { (level: Int) in min(max(level, Zstd.minLevel), Zstd.maxLevel) }
        return level(range.lowerBound)...level(range.upperBound)
    }

    /// The compression level after `--fast`, `--ultra` and clamping.
    func resolvedLevel(console: Console?) -> Int {
        if let fast = compressionFlags.fast { return -min(fast, -Zstd.minLevel) }
        let requested = compressionFlags.level ?? Zstd.defaultLevel
        let maximum = compressionFlags.ultra ? Zstd.maxLevel : 19
        if requested > maximum {
            let hint = compressionFlags.ultra ? "" : " without --ultra"
            console?.warning("compression level \(requested) is above the maximum \(maximum)\(hint); using \(maximum)")
            return maximum
        }
        return requested
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
                           chunkIsFixed: compressionFlags.chunkSize != nil, cores: resourceFlags.countedCores)
    }

    /// The compression options as the flags give them (threads 0 without -T).
    private func flagCompressionOptions(level: Int, dictionary: ZstdDictionary?) -> CompressionOptions {
        // Content-defined cuts must not depend on the input's size, which
        // fitting a small file to the workers would make them do.
        var options = CompressionOptions(
            level: level, threads: resourceFlags.requestedThreads,
            chunkSize: compressionFlags.chunkSize?.bytes,
            checksum: resourceFlags.verifiesChecksums,
            seekTable: !compressionFlags.noSeekTable, mapInput: resourceFlags.mapsInput,
            splitSmallInputs: compressionFlags.chunkSize == nil && !compressionFlags.rsyncable,
            contentSize: compressionFlags.writesContentSize,
            streamSize: compressionFlags.streamSize?.bytes,
            dictionary: dictionary, longWindowLog: dictionaryFlags.long)
        options.rsyncable = compressionFlags.rsyncable
        options.memberIndex = !compressionFlags.noMemberIndex
        // Every run of the command reads chunks whole (DispatchIOTuning).
        options.sizesReadBuffers = true
        options.parameters = compressionFlags.parameters ?? CompressionParameters()
        options.dictionaryID = !dictionaryFlags.noDictionaryID
        options.verify = resourceFlags.verify
        options.resumable = !outputFlags.noResume
        options.format = compressionFlags.format ?? .zstd
        if let range = adaptiveLevels {
            // As zstd: the level chosen, put in the range, is the first frame's.
            options.adaptiveLevels = range
            options.level = min(max(level, range.lowerBound), range.upperBound)
            options.resumable = false
            // Levels change frame by frame: the frame stays the 8 MiB of the
            // levels below 7 (the level's own, 64 MiB at -19, would leave a
            // 100 MB file two frames and nothing to adapt).
            if compressionFlags.chunkSize == nil { options.chunkSize = CompressionOptions.defaultChunkSize }
        }
        #if WEIR_TEST_HOOKS
        // The tests' way to show that --verify catches a flipped bit (test builds only).
        options.damagedFrameForTesting = getenv("WEIR_TEST_DAMAGE_FRAME").flatMap { Int(String(cString: $0)) }
        // The tests' way to slow a run, step by step, to watch its progress line.
        options.stepDelayForTesting = getenv("WEIR_TEST_STEP_DELAY").flatMap { Double(String(cString: $0)) }
        // The tests' way to stop a run after a step, to read its line at a known point.
        options.stepHoldForTesting = getenv("WEIR_TEST_STEP_HOLD").map { String(cString: $0) }
        #endif
        options.chunkSize = options.resolvedChunkSize
        return options
    }
}
