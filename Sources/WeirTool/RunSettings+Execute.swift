import Weir
import WeirFiles
import WeirCLI
import WeirPrograms
import WeirRemote
import Glibc

/// A run of the command: its inputs gathered, then the operation on them,
/// each reading only the resolved settings: a mode that is not the
/// compression's jobs is a type of its own, made here and run
/// (``MembersMode``, ``RangeMode``, ``IndexMode``, ``TrainMode``,
/// ``BenchmarkMode``; `-l` is ``ListReport``).
extension RunSettings {
    /// Gathers the inputs and runs the operation on them; returns the exit status.
    func execute() -> Int32 {
        if reporting.showVersion {
            print(WeirCommand.versionLine)
            return 0
        }
        if let trace = reporting.trace {
            do throws(WeirError) {
                try ZstdTrace.start(path: trace)
            } catch {
                Console(quietness: reporting.quiet, verbosity: reporting.verbose).error(
                    CommandHint.message(for: error))
                return 1
            }
        }
        defer { if reporting.trace != nil { ZstdTrace.stop() } }
        if reporting.traceFileStat { FileStatTrace.enable() }
        let gathered = gatherInputs()
        let inputs = gathered.names
        let console = Console(quietness: reporting.quiet, verbosity: reporting.verbose,
                              progress: showsProgress(inputs) ? ProgressDisplay(json: reporting.progressJSON) : nil,
                              summaries: showsSummaries(inputs), events: reporting.progressJSON)
        // zstd's notes about skipped links are hidden by -q. In the stream of
        // events, each names its input, and every input left out gets its end
        // object (the reporter's, numbered before the others).
        let linked = gathered.skipped.filter { $0.warning != nil }.map(\.name)
        if reporting.quiet == 0 {
            if reporting.progressJSON {
                for (name, warning) in gathered.skipped {
                    if let warning { console.warning(warning, file: name, input: name) }
                }
                let named = linked.map { "\(FileName.displayed($0)) is a symbolic link" }
                for warning in gathered.warnings where !named.contains(where: { warning.hasPrefix($0) }) {
                    console.warning(warning)
                }
            } else {
                for warning in gathered.warnings { console.warning(warning) }
            }
        }
        for error in gathered.errors { console.error(CommandHint.message(for: error), input: error.path) }
        let failed = !gathered.errors.isEmpty
        let skipped = reporting.progressJSON ? gathered.skipped.map(\.name) : []
        if gathered.onlyLinks {
            makeReporter(console: console, inputs: 0, skipped: skipped).endSkippedBeforeRun()
            return 1
        }
        // As zstd, training on folders with no file fails for want of samples.
        if gathered.nothingLeft, !operation.isTraining {
            if reporting.quiet == 0 { console.warning("no file found in the folders given -- ignored") }
            return failed ? 1 : 0
        }
        registerURLs(inputs)
        if memberSettings.isAsked {
            let status = MembersMode(settings: self, inputs: inputs, console: console).run()
            if !reporting.json { console.staleTemporaries() }
            return status != 0 ? status : failed ? 1 : 0
        }
        let status = switch operation {
        case .list:
            ListReport(files: inputs, verbose: reporting.verbose > 0, console: console).run() == 0 ? Int32(0) : 1
        case .train, .trainCover, .trainFastCover, .trainLegacy:
            TrainMode(settings: self, inputs: inputs, console: console).run()
        case .benchmark: BenchmarkMode(settings: self, inputs: inputs, console: console).run()
        case .index: IndexMode(settings: self, inputs: inputs, console: console).run()
        case .compress, .decompress, .test:
            decompressionSettings.ranges.isEmpty
                ? process(inputs, skipped: skipped, console: console)
                : RangeMode(settings: self, inputs: inputs, console: console).run()
        }
        // Those no file's report told (-o, ranges, a dictionary); none in JSON's stream.
        if !reporting.json { console.staleTemporaries() }
        return status != 0 ? status : failed ? 1 : 0
    }

    /// Compresses, decompresses or tests `inputs` (``JobScheduler`` decides
    /// how the jobs go); returns the exit status.
    /// `skipped`: the inputs left out before the run, whose end objects
    /// `--progress=json` writes first.
    func process(_ inputs: [String], skipped: [String] = [], console: Console) -> Int32 {
        // Read once, before any input: every job shares it.
        let (dictionary, unreadable) = readDictionary(console: console)
        if unreadable { return 1 }
        let (patch, refused) = readPatchReference(inputs, console: console)
        if refused { return 1 }
        // Several inputs and one -o file: written into it in turn, as zstd.
        var shared: OutputFile?
        if let outputFile = outputPolicy.file, inputs.count > 1, operationKind != .test {
            guard let opened = openConcatenation(outputFile, inputs: inputs, console: console) else { return 1 }
            shared = opened
        }
        if let root = outputPolicy.mirrorRoot, operationKind != .test, !outputPolicy.standardOutputRequested,
           outputPolicy.file == nil {
            for error in MirrorFolders.create(for: inputs, root: root) {
                console.error(CommandHint.message(for: error))
            }
        }
        let signals = SignalHandler(console: console)
        signals.install()
        let reporter = makeReporter(console: console, inputs: inputs.count, skipped: skipped)
        reporter.endSkippedBeforeRun()
        // Resolved once (a level above the maximum warns once), shared by every job.
        let planned = operationKind == .compress
            ? compressionPlan(level: resolvedLevel(console: console), dictionary: dictionary) : nil
        let compression = planned?.options
        showWorkers(planned?.plan ?? decompressionPlan(toStandardOutput: false, dictionary: nil).plan, console: console)
        if let compression { showParameters(of: inputs, compression, console: console) }
        let jobs = CommandJobs(settings: self, inputs: inputs, dictionary: dictionary, compression: compression,
                               patch: patch, console: console, shared: shared, reporter: reporter)
        JobScheduler.run(inputs, width: compression?.resolvedThreads ?? 1, followedLive: console.progress != nil,
                         cancellation: signals.cancellation, sync: outputPolicy.syncs, delegate: jobs)
        var failed = jobs.failed
        if let shared, let outputFile = outputPolicy.file {
            failed = !commitConcatenation(shared, path: outputFile, cancelled: signals.cancellation.isCancelled,
                                          console: console) || failed
        }
        if outputPolicy.flatFolder != nil, outputPolicy.mirrorRoot == nil, reporting.quiet == 0 {
            for name in NameCollisions.flat(inputs) {
                console.warning(
                    "two files have the same name \(FileName.displayed(name)): "
                        + "--output-dir-flat writes one output for both")
            }
        }
        reporter.finish(cancelled: signals.cancellation.isCancelled)
        signals.uninstall()
        if let signal = signals.received { return 128 + signal }
        return failed ? 1 : 0
    }

    /// The old file of `--patch-from=OLD` (nil without it), read once
    /// before any input; `refused` after an error was shown: as zstd, one
    /// input only, and standard input only with `--stream-size` (a patch
    /// is one frame of a size known beforehand).
    func readPatchReference(_ inputs: [String], console: Console) -> (patch: PatchReference?, refused: Bool) {
        guard let patchFrom = dictionarySettings.patchFrom else { return (nil, false) }
        if inputs.count > 1 {
            console.error("can't use --patch-from=\(FileName.displayed(patchFrom)) on multiple files")
            return (nil, true)
        }
        if operationKind == .compress, inputs.first ?? "-" == "-", compressionSettings.streamSize == nil {
            console.error("using --patch-from with standard input requires --stream-size")
            return (nil, true)
        }
        do throws(WeirError) {
            let reference = try PatchReference(path: patchFrom)
            // As zstd: said when the window turns long-distance matching on unasked.
            if operationKind == .compress, dictionarySettings.long == nil, reporting.quiet == 0 {
                let size = compressionSettings.streamSize ?? inputs.first.flatMap { FileStatus.of(path: $0)?.size }
                if PatchReference.needsLongDistance(level: resolvedLevel(console: nil),
                                                    windowLog: reference.windowLog(newSize: size), newSize: size,
                                                    oldSize: reference.count) {
                    console.warning("long mode automatically triggered")
                }
            }
            return (reference, false)
        } catch {
            console.error(CommandHint.message(for: error))
            return (nil, true)
        }
    }

    /// The dictionary of `-D` (nil without it), read once before any input;
    /// `unreadable` after its error was shown.
    func readDictionary(console: Console) -> (dictionary: ZstdDictionary?, unreadable: Bool) {
        guard let dictionaryFile = dictionarySettings.file else { return (nil, false) }
        do throws(WeirError) {
            return (try ZstdDictionary.load(path: dictionaryFile), false)
        } catch {
            console.error(CommandHint.message(for: error))
            return (nil, true)
        }
    }

    /// Registers the URLs among `inputs` (http://, https://) as the engine's
    /// inputs (docs/remote.md): read at offsets for a listing, members or
    /// ranges; for `-d`, `-dc` and `-t`, read ahead by parallel range
    /// requests when the object is a seekable archive, else streamed. Compression, `--index`,
    /// `-b` and training take no URL: theirs stay names of files.
    private func registerURLs(_ inputs: [String]) {
        let reading: RemoteInputs.Reading
        switch operation {
        case .list: reading = .atOffsets
        case .decompress, .test:
            reading = memberSettings.isAsked || !decompressionSettings.ranges.isEmpty ? .atOffsets : .whole
        case .compress, .train, .trainCover, .trainFastCover, .trainLegacy, .benchmark, .index:
            guard memberSettings.isAsked else { return }
            reading = .atOffsets
        }
        for input in inputs where RemoteInputs.isURL(input) { RemoteInputs.register(input, reading: reading) }
    }
}
