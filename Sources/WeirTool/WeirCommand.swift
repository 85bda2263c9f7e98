import ArgumentParser
import CAllocator
import Glibc
import Weir
import WeirCLI
import WeirFiles
import WeirPrograms

/// The `weir` command: flags in, library calls, exit status out.
@main
struct WeirCommand: ParsableCommand {
    static let version = "0.1.0"

    /// ", jemalloc X.Y.Z" when jemalloc serves this process's memory (see
    /// CAllocator), empty when another allocator does (a sanitizer's).
    static var allocatorNote: String {
        guard let version = weir_allocator_version() else { return "" }
        // Its bytes up to "-", without walking Characters: grapheme breaking
        // alone touched ~0.3 MB of the runtime's pages for `--version`.
        return ", jemalloc " + String(decoding: UnsafeRawBufferPointer(start: version, count: strcspn(version, "-")),
                                      as: UTF8.self)
    }

    /// What `-V` prints.
    static var versionLine: String {
        "weir \(version) (libzstd \(Zstd.libraryVersion)\(allocatorNote))"
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
        14 when training has too few samples (as zstd), 128+N after signal N.
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

    @Argument(help: ArgumentHelp("Files to process; - is standard input.", valueName: "FILE"))
    var files: [String] = []

    /// What the parser cannot read (ArgumentNormalizer), set after parsing.
    var facts = CommandLineFacts()

    // The parsed properties: `facts` is not one of them.
    enum CodingKeys: CodingKey {
        case operationFlags, outputFlags, compressionFlags, decompressionFlags, dictionaryFlags, resourceFlags,
             messageFlags, benchmarkFlags, files
    }

    // MARK: Entry point

    static func main() {
        // libzstd's advanced API is fixed only within one version.
        do throws(WeirError) {
            try Zstd.checkLibraryVersion(path: "weir", operation: .run)
        } catch {
            StandardError.write("weir: \(error.reason)\n")
            Glibc.exit(1)
        }
        // `weir --version` alone touches none of the parser's pages nor the
        // stdlib's string handling (docs/design.md, "Start-up"); the parsed
        // flag prints the same line.
        if Invocation.asksVersionAlone {
            print(versionLine)
            Glibc.exit(0)
        }
        // The program name (unweir, weircat) and WEIR_CLEVEL/WEIR_NBTHREADS
        // add arguments before the command line's own, which are read as
        // bytes: a name that is not UTF-8 stays the name it is (FileName).
        let invocation = Invocation(commandLine: ArgumentBytes.arguments(), environment: Invocation.environment())
        // Many small outputs are synced in groups, each file kept open until
        // its group's sync: the more descriptors, the fewer syncs (CommitQueue).
        var limit = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = min(limit.rlim_max, 1 << 16)
            _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        }
        let arguments = invocation.arguments
        do {
            var command = try parseAsRoot(arguments)
            if var weir = command as? WeirCommand {
                weir.facts = invocation.facts
                try weir.validateFacts()
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
            print(Self.versionLine)
            return 0
        }
        if let trace = messageFlags.trace {
            do throws(WeirError) {
                try ZstdTrace.start(path: trace)
            } catch {
                Console(quietness: messageFlags.quiet, verbosity: messageFlags.verbose).error(
                    CommandHint.message(for: error))
                return 1
            }
        }
        defer { if messageFlags.trace != nil { ZstdTrace.stop() } }
        if messageFlags.traceFileStat { FileStatTrace.enable() }
        let gathered = gatherInputs()
        let inputs = gathered.names
        let console = Console(quietness: messageFlags.quiet, verbosity: messageFlags.verbose,
                              progress: showsProgress(inputs) ? ProgressDisplay(json: facts.progressJSON) : nil,
                              summaries: showsSummaries(inputs), events: facts.progressJSON)
        // zstd's notes about skipped links are hidden by -q.
        if messageFlags.quiet == 0 { for warning in gathered.warnings { console.warning(warning) } }
        for error in gathered.errors { console.error(CommandHint.message(for: error), input: error.path) }
        let failed = !gathered.errors.isEmpty
        if gathered.onlyLinks { return 1 }
        // As zstd, training on folders with no file fails for want of samples.
        if gathered.nothingLeft, !operationFlags.operation.isTraining {
            if messageFlags.quiet == 0 { console.warning("no file found in the folders given -- ignored") }
            return failed ? 1 : 0
        }
        let status = switch operationFlags.operation {
        case .list:
            ListReport(files: inputs, verbose: messageFlags.verbose > 0, console: console).run() == 0 ? Int32(0) : 1
        case .train, .trainCover, .trainFastCover, .trainLegacy: trainDictionary(inputs, console: console)
        case .benchmark: benchmark(inputs, console: console)
        case .index: index(inputs, console: console)
        case .compress, .decompress, .test:
            // --range (with -d or -t) writes the ranges asked, not whole files.
            decompressionFlags.ranges.isEmpty
                ? process(inputs, console: console) : extractRanges(inputs, console: console)
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
        let (patch, refused) = readPatchReference(inputs, console: console)
        if refused { return 1 }
        // Several inputs and one -o file: written into it in turn, as zstd.
        var shared: OutputFile?
        if let outputFile, inputs.count > 1, operationKind != .test {
            guard let opened = openConcatenation(outputFile, inputs: inputs, console: console) else { return 1 }
            shared = opened
        }
        if let root = outputFlags.outputDirMirror, operationKind != .test, !standardOutputRequested, outputFile == nil {
            for error in MirrorFolders.create(for: inputs, root: root) {
                console.error(CommandHint.message(for: error))
            }
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
        let jobs = CommandJobs(command: self, inputs: inputs, dictionary: dictionary, compression: compression,
                               patch: patch, console: console, shared: shared, reporter: reporter)
        JobScheduler.run(inputs, width: compression?.resolvedThreads ?? 1, followedLive: console.progress != nil,
                         cancellation: signals.cancellation, sync: !outputFlags.noSync, delegate: jobs)
        var failed = jobs.failed
        if let shared, let outputFile {
            failed = !commitConcatenation(shared, path: outputFile, cancelled: signals.cancellation.isCancelled,
                                          console: console) || failed
        }
        if outputFlags.outputDirFlat != nil, outputFlags.outputDirMirror == nil, messageFlags.quiet == 0 {
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
        guard let patchFrom = dictionaryFlags.patchFrom else { return (nil, false) }
        if inputs.count > 1 {
            console.error("can't use --patch-from=\(FileName.displayed(patchFrom)) on multiple files")
            return (nil, true)
        }
        if operationKind == .compress, inputs.first ?? "-" == "-", compressionFlags.streamSize == nil {
            console.error("using --patch-from with standard input requires --stream-size")
            return (nil, true)
        }
        do throws(WeirError) {
            let reference = try PatchReference(path: patchFrom)
            // As zstd: said when the window turns long-distance matching on unasked.
            if operationKind == .compress, dictionaryFlags.long == nil, messageFlags.quiet == 0 {
                let size = compressionFlags.streamSize?.bytes ?? inputs.first.flatMap { FileStatus.of(path: $0)?.size }
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
        guard let dictionaryFile = dictionaryFlags.dictionaryFile else { return (nil, false) }
        do throws(WeirError) {
            return (try ZstdDictionary.load(path: dictionaryFile), false)
        } catch {
            console.error(CommandHint.message(for: error))
            return (nil, true)
        }
    }
}
