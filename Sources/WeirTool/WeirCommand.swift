import ArgumentParser
import CAllocator
import FoundationEssentials
import Weir
import WeirCLI
import WeirPrograms
import Glibc

/// The `weir` command: flags in, library calls, exit status out.
@main
struct WeirCommand: ParsableCommand {
    static let version = "0.1.0"

    /// ", jemalloc X.Y.Z" when jemalloc serves this process's memory (see
    /// CAllocator), empty when another allocator does (a sanitizer's).
    static var allocatorNote: String {
        guard let version = weir_allocator_version() else { return "" }
        return ", jemalloc " + String(String(cString: version).prefix { $0 != "-" })
    }

    static let configuration = CommandConfiguration(
        commandName: "weir",
        abstract: "Compress and decompress files and pipes with zstd, in parallel.",
        discussion: """
        With no FILE, or when FILE is -, reads standard input and writes standard output.
        Output is standard zstd (many independent frames) that zstd -d decodes.
        Levels: -1 ... -19 (default 3), --ultra -20 ... -22, --fast[=N].
        Sizes accept K, KB, KiB, M, MB, MiB, G, GB, GiB.
        Exit status: 0 on success, 1 if any file failed or on a usage error,
        128+N after signal N.
        Environment: WEIR_CLEVEL (level), WEIR_NBTHREADS (threads); flags win.
        unweir is weir -d, weircat is weir -dc --pass-through; linked as zstd,
        unzstd, zstdcat, zcat or zstdmt, weir acts as zstd does under that name
        (and reads ZSTD_CLEVEL, ZSTD_NBTHREADS). See man weir.
        """,
        helpNames: [.short, .long, .customShort("H")]
    )

    // The flags, in the groups --help shows: WeirCommand+Options.swift.

    @OptionGroup(title: "Operation")
    var operationFlags: OperationFlags

    @OptionGroup(title: "Output")
    var outputFlags: OutputFlags

    @OptionGroup(title: "Compression")
    var compressionFlags: CompressionFlags

    @OptionGroup(title: "Decompression")
    var decompressionFlags: DecompressionFlags

    @OptionGroup(title: "Dictionaries and long-distance matching")
    var dictionaryFlags: DictionaryFlags

    @OptionGroup(title: "Threads, checksums and memory")
    var resourceFlags: ResourceFlags

    @OptionGroup(title: "Messages")
    var messageFlags: MessageFlags

    @OptionGroup(title: "Benchmark")
    var benchmarkFlags: BenchmarkFlags

    @Option(name: .customLong("level"), help: .hidden)
    var level: Int?

    @Flag(name: .customLong("stdout-wins"), help: .hidden)
    var stdoutWins = false

    @Argument(help: ArgumentHelp("Files to process; - is standard input.", valueName: "FILE"))
    var files: [String] = []

    // MARK: Entry point

    static func main() {
        // libzstd's advanced API is fixed only within one version.
        do throws(WeirError) {
            try Zstd.checkLibraryVersion(path: "weir", operation: .run)
        } catch {
            StandardError.write("weir: \(error.reason)\n")
            Glibc.exit(1)
        }
        // Before any channel exists: libdispatch's read buffers sized to each
        // read, so a chunk arrives whole (see DispatchIOTuning).
        DispatchIOTuning.configureProcess()
        // Many small outputs are synced in groups, each file kept open until
        // its group's sync: the more descriptors, the fewer syncs (CommitQueue).
        var limit = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = min(limit.rlim_max, 1 << 16)
            _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        }
        // The program name (unweir, weircat) and WEIR_CLEVEL/WEIR_NBTHREADS
        // add arguments before the command line's own, which are read as
        // bytes: a name that is not UTF-8 stays the name it is (FileName).
        let invocation = Invocation(commandLine: ArgumentBytes.arguments(),
                                    environment: ProcessInfo.processInfo.environment)
        let arguments = invocation.arguments
        do {
            var command = try parseAsRoot(arguments)
            if var weir = command as? WeirCommand {
                invocation.reportWarnings(quietness: weir.messageFlags.quiet)
                let status = weir.execute()
                Glibc.exit(status)
            }
            try command.run()
        } catch {
            // A usage error exits with 1, as zstd's do (ArgumentParser would
            // use 64); help, version and completion scripts keep 0.
            if exitCode(for: error).isSuccess { exit(withError: error) }
            // ArgumentParser quotes arguments as given: show their bytes that
            // are not UTF-8 as \xFF, as every other message does.
            StandardError.write(FileName.displayingEscapes(fullMessage(for: error)) + "\n")
            Glibc.exit(1)
        }
    }

    /// Gathers the inputs and runs the operation on them; returns the exit status.
    mutating func execute() -> Int32 {
        if messageFlags.showVersion {
            print("weir \(Self.version) (libzstd \(Zstd.libraryVersion)\(Self.allocatorNote))")
            return 0
        }
        if let trace = messageFlags.trace {
            do throws(WeirError) {
                try ZstdTrace.start(path: trace)
            } catch {
                Console(quietness: messageFlags.quiet, verbosity: messageFlags.verbose).error(CommandHint.message(for: error))
                return 1
            }
        }
        defer { if messageFlags.trace != nil { ZstdTrace.stop() } }
        let gathered = gatherInputs()
        let inputs = gathered.names
        let console = Console(quietness: messageFlags.quiet, verbosity: messageFlags.verbose,
                              progress: showsProgress(inputs) ? ProgressDisplay() : nil,
                              summaries: showsSummaries(inputs))
        // zstd's notes about skipped links are hidden by -q.
        if messageFlags.quiet == 0 { for warning in gathered.warnings { console.warning(warning) } }
        for error in gathered.errors { console.error(CommandHint.message(for: error)) }
        let failed = !gathered.errors.isEmpty
        if gathered.onlyLinks { return 1 }
        // As zstd, training on folders with no file fails for want of samples.
        if gathered.nothingLeft, !operationFlags.operation.isTraining {
            if messageFlags.quiet == 0 { console.warning("no file found in the folders given -- ignored") }
            return failed ? 1 : 0
        }
        let status = switch operationFlags.operation {
        case .list: ListReport(files: inputs, verbose: messageFlags.verbose > 0, console: console).run() == 0 ? Int32(0) : 1
        case .train, .trainCover, .trainFastCover, .trainLegacy: trainDictionary(inputs, console: console)
        case .benchmark: benchmark(inputs, console: console)
        case .index: index(inputs, console: console)
        case .compress, .decompress, .test:
            // A `where` after two patterns would guard only the second.
            decompressionFlags.ranges.isEmpty ? process(inputs, console: console) : extractRanges(inputs, console: console)
        }
        // Those no file's report told (-o, ranges, a dictionary); none in JSON's stream.
        if !messageFlags.json { console.staleTemporaries() }
        return status != 0 ? status : failed ? 1 : 0
    }

    /// Compresses, decompresses or tests `inputs` (``JobScheduler`` decides
    /// how the jobs go); returns the exit status.
    func process(_ inputs: [String], console: Console) -> Int32 {
        // Read once, before any input: every job shares it.
        let (dictionary, unreadable) = readDictionary(console: console)
        if unreadable { return 1 }
        // Several inputs and one -o file: written into it in turn, as zstd.
        var shared: OutputFile?
        if let outputFile, inputs.count > 1, operationKind != .test {
            guard let opened = openConcatenation(outputFile, inputs: inputs, console: console) else { return 1 }
            shared = opened
        }
        if let root = outputFlags.outputDirMirror, operationKind != .test, !standardOutputRequested, outputFile == nil {
            for error in MirrorFolders.create(for: inputs, root: root) { console.error(CommandHint.message(for: error)) }
        }
        let signals = SignalHandler(console: console)
        signals.install()
        let reporter = makeReporter(console: console, inputs: inputs.count)
        // Resolved once (a level above the maximum warns once), shared by every job.
        let planned = operationKind == .compress
            ? compressionPlan(level: resolvedLevel(console: console), dictionary: dictionary) : nil
        let compression = planned?.options
        showWorkers(planned?.plan ?? decompressionPlan(toStandardOutput: false, dictionary: nil).plan, console: console)
        if let compression { showParameters(of: inputs, compression, console: console) }
        var failed = false
        JobScheduler.run(inputs, width: compression?.resolvedThreads ?? 1, followedLive: console.progress != nil,
                         cancellation: signals.cancellation, sync: !outputFlags.noSync, plan: { index in
            try? makeJob(for: inputs[index], dictionary: dictionary, compression: compression, console: console)
        }, make: { index in
            Result { () throws(WeirError) in
                try makeJob(for: inputs[index], dictionary: dictionary, compression: compression, console: console,
                            shared: shared, asking: true)
            }
        }, started: { index, job in
            reporter.started(job, file: index + 1)
        }, ended: reporter.endProgress, report: { index, made, outcome in
            switch (made, outcome) {
            case (.success(let job), .success(let statistics)): reporter.succeeded(job, statistics)
            case (_, .failure(let error)):
                failed = true
                reporter.failed(input: inputs[index], job: try? made.get(), error: error,
                                quietPipe: error.isBrokenPipe && messageFlags.quiet > 0)
            case (.failure, .success): break  // a job not made has no statistics
            }
        })
        if let shared, let outputFile {
            failed = !commitConcatenation(shared, path: outputFile, cancelled: signals.cancellation.isCancelled,
                                          console: console) || failed
        }
        if outputFlags.outputDirFlat != nil, outputFlags.outputDirMirror == nil, messageFlags.quiet == 0 {
            for name in NameCollisions.flat(inputs) {
                console.warning("two files have the same name \(FileName.displayed(name)): --output-dir-flat writes one output for both")
            }
        }
        reporter.finish(cancelled: signals.cancellation.isCancelled)
        signals.uninstall()
        if let signal = signals.received { return 128 + signal }
        return failed ? 1 : 0
    }

    /// The dictionary of `-D` (nil without it), read once before any input;
    /// `unreadable` after its error was shown.
    func readDictionary(console: Console) -> (dictionary: ZstdDictionary?, unreadable: Bool) {
        guard let dictionaryFile = dictionaryFlags.dictionaryFile else { return (nil, false) }
        do throws(WeirError) {
            return (try ZstdDictionary.load(path: dictionaryFile), false)
        } catch {
            console.error(CommandHint.message(for: error))
            return (nil, true)
        }
    }

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
                console.write(ZstdParameterList.defaultsBlock(
                    name: FileName.displayed(input), size: size,
                    CompressionParameters().resolved(level: compression.level, size: size, dictionarySize: dictionarySize)))
            }
            if messageFlags.verbose >= 2 {
                let frame = size.map { min($0, compression.chunkSize) }
                console.write(ZstdParameterList.line(compression.parameters.resolved(
                    level: compression.level, size: frame, dictionarySize: dictionarySize)) + "\n")
            }
        }
    }

    /// The compression level after `--fast`, `--ultra` and clamping.
    func resolvedLevel(console: Console?) -> Int {
        if let fast = compressionFlags.fast { return -min(fast, -Zstd.minLevel) }
        let requested = level ?? Zstd.defaultLevel
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
    func compressionPlan(level: Int, dictionary: ZstdDictionary? = nil) -> (options: CompressionOptions, plan: WorkerPlan) {
        var options = flagCompressionOptions(level: level, dictionary: dictionary)
        let plan = WorkerPlan.compression(options, limits: .current, chunkIsFixed: compressionFlags.chunkSize != nil,
                                          cores: resourceFlags.countedCores)
        options.threads = plan.workers
        if let chunkSize = plan.chunkSize { options.chunkSize = chunkSize }
        return (options, plan)
    }

    /// The compression options as the flags give them (threads 0 without -T).
    private func flagCompressionOptions(level: Int, dictionary: ZstdDictionary?) -> CompressionOptions {
        // Content-defined cuts must not depend on the input's size, which
        // fitting a small file to the workers would make them do.
        var options = CompressionOptions(level: level, threads: resourceFlags.requestedThreads,
                                         chunkSize: compressionFlags.resolvedChunkSize.bytes,
                                         checksum: resourceFlags.verifiesChecksums,
                                         seekTable: !compressionFlags.noSeekTable, mapInput: resourceFlags.mapsInput,
                                         splitSmallInputs: compressionFlags.chunkSize == nil && !compressionFlags.rsyncable,
                                         contentSize: compressionFlags.writesContentSize,
                                         streamSize: compressionFlags.streamSize?.bytes,
                                         dictionary: dictionary, longWindowLog: dictionaryFlags.long)
        options.rsyncable = compressionFlags.rsyncable
        options.parameters = compressionFlags.parameters ?? CompressionParameters()
        options.dictionaryID = !dictionaryFlags.noDictionaryID
        options.chunkSize = options.resolvedChunkSize
        return options
    }

    // MARK: Destinations

    /// Whether `--exclude-compressed` skips `input`: when compressing (not
    /// listing or training, which zstd does on every file), a file whose name
    /// says it is compressed already. As zstd, it is skipped silently and
    /// does not count as a failure.
    func isExcluded(_ input: String) -> Bool {
        compressionFlags.excludeCompressed && operationFlags.operation == .compress && input != "-"
            && CompressedName.matches(input)
    }

    /// Whether `-c` or `-o -` sends every result to standard output (of `-c`
    /// and `-o FILE`, the last one given wins).
    var standardOutputRequested: Bool {
        outputFlags.output == "-" || (outputFlags.toStdout && (outputFlags.output == nil || stdoutWins))
    }

    /// The file `-o` names, unless standard output was asked for.
    var outputFile: String? { standardOutputRequested ? nil : outputFlags.output }

    /// Whether the result of `input` goes to standard output: asked for, or
    /// standard input with no `-o FILE`. A test writes nothing.
    func writesToStandardOutput(_ input: String) -> Bool {
        operationKind != .test && (standardOutputRequested || (input == "-" && outputFile == nil))
    }

    /// The job for one input, after the safety checks that depend on flags.
    ///
    /// - Parameters:
    ///   - shared: the one output several inputs are written into, in turn.
    ///   - asking: whether an existing output may be asked about (zstd's
    ///     `overwrite (y/n) ?`, unless `-q`); false when only the names matter.
    func makeJob(for input: String, dictionary: ZstdDictionary? = nil, compression: CompressionOptions? = nil,
                 console: Console, shared: OutputFile? = nil, asking: Bool = false) throws(WeirError) -> FileJob {
        let name = input == "-" ? "(stdin)" : input
        let toStandardOutput = writesToStandardOutput(input)
        let operation: FileJob.Operation = switch operationKind {
        case .test: .test(decompressionOptions(toStandardOutput: toStandardOutput, dictionary: dictionary))
        case .decompress: .decompress(decompressionOptions(toStandardOutput: toStandardOutput, dictionary: dictionary,
                                                           appending: shared != nil))
        case .compress: .compress(compression ?? compressionOptions(level: resolvedLevel(console: console), dictionary: dictionary))
        }
        let compressing = operationKind == .compress
        // As zstd: the dictionary is not also an input.
        if let dictionaryFile = dictionaryFlags.dictionaryFile, input != "-", let inputStatus = FileStatus.of(path: input),
           let dictionaryStatus = FileStatus.of(path: dictionaryFile), inputStatus.isSameFile(as: dictionaryStatus) {
            throw WeirError.inputIsDictionary(path: name)
        }

        if input == "-", isatty(STDIN_FILENO) == 1, !outputFlags.force {
            throw WeirError.terminalInput(path: name, compressing: compressing)
        }
        let destination: FileJob.Destination
        if operationKind == .test {
            destination = .none
        } else if let shared, let outputFile {
            destination = .shared(shared.descriptor, name: outputFile)
        } else if toStandardOutput {
            if compressing, isatty(STDOUT_FILENO) == 1, !outputFlags.toStdout, !outputFlags.force {
                throw WeirError.terminalOutput()
            }
            destination = .standardOutput
        } else if let outputFile {
            destination = .file(outputFile)
        } else if compressing {
            destination = .file(try placed(OutputName.compressed(for: input), input: input))
        } else {
            destination = .file(try placed(try OutputName.decompressed(for: input), input: input))
        }
        // Compared as scalars: `==` on Strings would call two spellings of
        // "é" equal, which are two names.
        if case .file(let path) = destination, path.unicodeScalars.elementsEqual(input.unicodeScalars) {
            throw WeirError.sameFile(path: name)
        }
        var force = outputFlags.force
        if asking, !force, case .file(let path) = destination, FileStatus.of(path: path)?.isRegularFile == true,
           messageFlags.quiet == 0 {
            guard Confirmation.ask("weir: \(FileName.displayed(path)): already exists; overwrite (y/n) ? ",
                                   stdinIsInput: input == "-" || files.contains("-")) else {
                throw WeirError(.outputExists, path: path, operation: .create, reason: "not overwritten")
            }
            force = true
        }
        let removes: Bool = switch destination {
        case .file: outputFlags.removeInput && input != "-"
        case .standardOutput, .shared, .none: false
        }
        return FileJob(input: input, operation: operation, destination: destination, force: force, removeInput: removes)
    }

    /// The decompression options of the flags for an output that is, or is
    /// not, standard output. As zstd: pass-through by default when forced to
    /// standard output (-dcf); sparse by default when writing a file.
    /// An output several inputs are `appending` to has no holes either.
    /// Its workers and, without -M, its memory limit follow
    /// ``decompressionPlan(toStandardOutput:dictionary:appending:)``.
    func decompressionOptions(toStandardOutput: Bool, dictionary: ZstdDictionary?,
                              appending: Bool = false) -> DecompressionOptions {
        decompressionPlan(toStandardOutput: toStandardOutput, dictionary: dictionary, appending: appending).options
    }

    /// The decompression options of the flags, and the plan that chose
    /// their workers (and, without -M, their memory limit): -T as given,
    /// else the cores this process may use, fewer under a cgroup memory limit.
    func decompressionPlan(toStandardOutput: Bool, dictionary: ZstdDictionary?,
                           appending: Bool = false) -> (options: DecompressionOptions, plan: WorkerPlan) {
        // As zstd: without -M, --zstd=wlog=N sets the limit to 2^N.
        var options = DecompressionOptions(
            verifyChecksum: resourceFlags.verifiesChecksums,
            memoryLimit: resourceFlags.memory?.bytes ?? compressionFlags.parameters?.windowLog.map { 1 << min($0, 31) },
            threads: resourceFlags.requestedThreads, mapInput: resourceFlags.mapsInput,
            passThrough: decompressionFlags.passThrough ?? (outputFlags.force && toStandardOutput),
            sparse: decompressionFlags.sparse ?? !(toStandardOutput || appending),
            dictionary: dictionary, longWindowLog: dictionaryFlags.long)
        let plan = WorkerPlan.decompression(options, limits: .current, cores: resourceFlags.countedCores)
        options.threads = plan.workers
        if options.memoryLimit == nil { options.memoryLimit = plan.decompressionMemory }
        return (options, plan)
    }
}
