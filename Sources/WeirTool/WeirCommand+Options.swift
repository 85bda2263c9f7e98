import ArgumentParser
import Weir
import WeirCLI

// The flags of `weir`, in the groups `--help` shows them in. WeirCommand
// pulls each group in with @OptionGroup(title:), validates them, and
// resolves them once into RunSettings, which is all the run reads; the
// extensions at the end resolve the defaults that take more than the flag
// (`resourceFlags.resolvedThreads`).

/// What weir does with its inputs: one, and of several given the last one
/// wins, as zstd (`unweir -z` compresses). The training flags take optional
/// parameters (`--train-cover=k=48,d=8`), which ArgumentNormalizer keeps
/// in CommandLineFacts.
enum Operation: String, EnumerableFlag {
    case compress, decompress, test, list, index, train, trainCover, trainFastCover, trainLegacy, benchmark

    static func name(for value: Self) -> NameSpecification {
        switch value {
        case .compress: [.customShort("z"), .customLong("compress")]
        case .decompress, .test, .list: [.short, .long]
        case .index: .customLong("index")
        case .train: .customLong("train")
        case .trainCover: .customLong("train-cover")
        case .trainFastCover: .customLong("train-fastcover")
        case .trainLegacy: .customLong("train-legacy")
        case .benchmark: [.customShort("b"), .customLong("bench")]
        }
    }

    static func help(for value: Self) -> ArgumentHelp? {
        switch value {
        case .compress: "Compress."
        case .decompress: "Decompress."
        case .test: "Test compressed files: decompress, verify, write nothing."
        case .list: ArgumentHelp(HelpText.list)
        case .index: ArgumentHelp(HelpText.index)
        case .train: ArgumentHelp(HelpText.train)
        case .trainCover: ArgumentHelp(HelpText.trainCover)
        case .trainFastCover: ArgumentHelp(HelpText.trainFastCover)
        case .trainLegacy: "Train with the legacy builder: --train-legacy[=s=N], or -sN, selectivity N (default 9)."
        case .benchmark: ArgumentHelp(HelpText.benchmark)
        }
    }

    /// Whether the operation trains a dictionary.
    var isTraining: Bool { [.train, .trainCover, .trainFastCover, .trainLegacy].contains(self) }
}

/// What to do with the inputs.
struct OperationFlags: ParsableArguments {
    @Flag(exclusivity: .chooseLast)
    var operation: Operation = .compress

    @Flag(name: [.customShort("r"), .customLong("recursive")], help: ArgumentHelp(HelpText.recursive))
    var recursive = false

    @Option(name: .customLong("filelist"), help: ArgumentHelp(HelpText.fileLists, valueName: "FILE"))
    var fileLists: [String] = []

    @Option(name: .customLong("index-from"), help: ArgumentHelp(HelpText.indexFrom, valueName: "TAR"))
    var indexFrom: String?

}

/// zstd's benchmark flags (with `-b`).
struct BenchmarkFlags: ParsableArguments {
    @Option(name: .customShort("e"), help: ArgumentHelp("Benchmark every level from -b# to N.", valueName: "N"))
    var lastLevel: Int?

    @Option(name: .customShort("i"), help: ArgumentHelp(HelpText.seconds, valueName: "N"))
    var seconds: Int?

    @Flag(name: .customShort("S"), help: "Benchmark each file on its own (default: all the files as one sample).")
    var separateFiles = false

    @Option(name: .customLong("priority"), help: ArgumentHelp(HelpText.priority, valueName: "rt"))
    var priority: String?
}

/// Where the results go.
struct OutputFlags: ParsableArguments {
    @Flag(name: [.customShort("c"), .customLong("stdout")], help: "Write to standard output.")
    var toStdout = false

    @Option(name: [.customShort("o"), .customLong("output")], help: ArgumentHelp(HelpText.output, valueName: "FILE"))
    var output: String?

    @Flag(name: [.short, .long], help: "Overwrite existing files; read or write compressed data on a terminal.")
    var force = false

    @Flag(name: [.short, .long], help: "Keep the input files (the default).")
    var keep = false

    @Flag(name: .customLong("rm"), help: ArgumentHelp(HelpText.removeInput))
    var removeInput = false

    @Flag(name: .customLong("no-sync"), help: ArgumentHelp(HelpText.noSync))
    var noSync = false

    @Flag(name: .customLong("no-resume"), help: ArgumentHelp(HelpText.noResume))
    var noResume = false

    @Option(name: .customLong("output-dir-flat"), help: ArgumentHelp(HelpText.outputDirFlat, valueName: "DIR"))
    var outputDirFlat: String?

    @Option(name: .customLong("output-dir-mirror"), help: ArgumentHelp(HelpText.outputDirMirror, valueName: "DIR"))
    var outputDirMirror: String?
}

/// How to compress.
struct CompressionFlags: ParsableArguments {
    @Option(name: .customLong("level"), help: ArgumentHelp(HelpText.level, valueName: "#"))
    var level: Int?

    @Flag(name: .customLong("ultra"), help: "Allow levels 20 to 22 (more memory).")
    var ultra = false

    @Option(name: .customLong("fast"), help: ArgumentHelp(HelpText.fast, valueName: "N"))
    var fast: Int?

    @Option(
        name: [.customShort("B"), .customLong("chunk-size")], help: ArgumentHelp(HelpText.chunkSize, valueName: "SIZE"))
    var chunkSize: ByteCount?

    @Flag(name: .customLong("adapt"), help: ArgumentHelp(HelpText.adapt))
    var adapt = false

    @Flag(name: .customLong("rsyncable"), help: ArgumentHelp(HelpText.rsyncable))
    var rsyncable = false

    @Flag(name: .customLong("no-seek-table"), help: "Do not end the output with a seek table (zstd's seekable format).")
    var noSeekTable = false

    @Flag(name: .customLong("no-member-index"),
          help: "Do not write a tar's member index before the seek table (compressing, or with --index).")
    var noMemberIndex = false

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(HelpText.contentSize))
    var contentSize: Bool?

    @Option(name: .customLong("stream-size"), help: ArgumentHelp(HelpText.streamSize, valueName: "SIZE"))
    var streamSize: ByteCount?

    @Option(name: .customLong("format"), help: ArgumentHelp(HelpText.format, valueName: "FORMAT"))
    var format: CompressedFormat?

    @Flag(name: .customLong("exclude-compressed"), help: ArgumentHelp(HelpText.excludeCompressed))
    var excludeCompressed = false

    @Option(name: .customLong("zstd"), help: ArgumentHelp(HelpText.zstdParameters, valueName: "LIST"))
    var zstdParameters: [String] = []

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(HelpText.compressLiterals))
    var compressLiterals: Bool?

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(HelpText.rowMatchFinder))
    var rowMatchFinder: Bool?

    @Option(
        name: .customLong("target-compressed-block-size"),
        help: ArgumentHelp(HelpText.targetCompressedBlockSize, valueName: "SIZE"))
    var targetCompressedBlockSize: ByteCount?

    @Flag(name: .customLong("show-default-cparams"), help: ArgumentHelp(HelpText.showDefaultCParams))
    var showDefaultCParams = false
}

/// How to decompress.
struct DecompressionFlags: ParsableArguments {
    @Flag(inversion: .prefixedNo, help: ArgumentHelp(HelpText.passThrough))
    var passThrough: Bool?

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(HelpText.sparse))
    var sparse: Bool?

    @Option(name: .customLong("range"), help: ArgumentHelp(HelpText.ranges, valueName: "LIST"))
    var ranges: [String] = []
}

/// Dictionaries and long-distance matching, as zstd spells them.
struct DictionaryFlags: ParsableArguments {
    @Option(
        name: [.customShort("D"), .customLong("dictionary")],
        help: ArgumentHelp(HelpText.dictionaryFile, valueName: "DICT"))
    var dictionaryFile: String?

    @Flag(name: .customLong("no-dictID"), help: ArgumentHelp(HelpText.noDictionaryID))
    var noDictionaryID = false

    @Option(name: .customLong("maxdict"), help: ArgumentHelp(HelpText.maxDictionary, valueName: "SIZE"))
    var maxDictionary: ByteCount?

    @Option(name: .customLong("dictID"), help: ArgumentHelp(HelpText.dictionaryID, valueName: "N"))
    var dictionaryID: ByteCount?

    @Option(name: .customLong("patch-from"), help: ArgumentHelp(HelpText.patchFrom, valueName: "OLD"))
    var patchFrom: String?

    @Option(name: .customLong("long"), help: ArgumentHelp(HelpText.long, valueName: "N"))
    var long: Int?
}

/// What both directions share: workers, checksums, memory.
struct ResourceFlags: ParsableArguments {
    @Option(name: [.customShort("T"), .customLong("threads")], help: ArgumentHelp(HelpText.threads, valueName: "N"))
    var threads: Int?

    @Flag(name: .customLong("single-thread"), help: ArgumentHelp(HelpText.singleThread))
    var singleThread = false

    @Option(name: .customLong("auto-threads"), help: ArgumentHelp(HelpText.autoThreads, valueName: "physical|logical"))
    var autoThreads: AutoThreads?

    @Flag(name: [.customShort("C"), .customLong("check")], inversion: .prefixedNo, help: ArgumentHelp(HelpText.check))
    var check: Bool?

    @Flag(name: .customLong("verify"), help: ArgumentHelp(HelpText.verify))
    var verify = false

    @Option(
        name: [.customShort("M"), .customLong("memory"), .customLong("memlimit"), .customLong("memlimit-decompress")],
        help: ArgumentHelp(HelpText.memory, valueName: "SIZE"))
    var memory: ByteCount?

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(HelpText.mmap))
    var mmap: Bool?

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(HelpText.asyncio))
    var asyncio: Bool?
}

/// What weir says on stderr.
struct MessageFlags: ParsableArguments {
    @Flag(name: [.short, .long], help: "Quieter: no summary; twice: no warnings either.")
    var quiet: Int

    @Flag(name: [.short, .long], help: "More verbose.")
    var verbose: Int

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(HelpText.progress))
    var progress: Bool?

    @Option(name: .customLong("size-hint"), help: ArgumentHelp(HelpText.sizeHint, valueName: "SIZE"))
    var sizeHint: ByteCount?

    @Flag(name: .customLong("json"), help: "Instead of the summary, one JSON object per input on stderr, and a total.")
    var json = false

    @Option(name: .customLong("trace"), help: ArgumentHelp(HelpText.trace, valueName: "FILE"))
    var trace: String?

    @Flag(name: .customLong("fake-stderr-is-console"), help: ArgumentHelp(HelpText.fakeStderrIsConsole))
    var fakeStderrIsConsole = false

    @Flag(name: .customLong("trace-file-stat"), help: ArgumentHelp(HelpText.traceFileStat))
    var traceFileStat = false

    @Flag(name: [.customShort("V"), .customLong("version")], help: "Print the version of weir and of libzstd.")
    var showVersion = false
}

/// `--format`: the formats zstd's flag names (the engine's ``CompressedFormat``).
extension CompressedFormat: ExpressibleByArgument {}

extension CompressionFlags {
    /// The parameters of every `--zstd=` and `--[no-]compress-literals`;
    /// nil when a `--zstd=` list is not valid.
    var parameters: CompressionParameters? {
        var parameters = CompressionParameters()
        for list in zstdParameters {
            guard ZstdParameterList.parse(list, into: &parameters) else { return nil }
        }
        parameters.compressLiterals = compressLiterals
        parameters.useRowMatchFinder = rowMatchFinder
        // 0 is zstd's "no target".
        parameters.targetCompressedBlockSize = targetCompressedBlockSize.flatMap { $0.bytes == 0 ? nil : $0.bytes }
        return parameters
    }

    /// Frames declare their content size unless --no-content-size.
    var writesContentSize: Bool { contentSize ?? true }
}


extension ResourceFlags {
    /// -T N, or 1 with --single-thread (the normalizer keeps whichever was
    /// given last); 0 resolved to physical cores with --auto-threads=physical.
    var resolvedThreads: Int {
        let threads = singleThread ? 1 : self.threads ?? 0
        return threads == 0 && autoThreads == .physical ? CoreCount.physical : threads
    }
    /// The workers -T or --single-thread ask for; 0 when the run chooses
    /// (WorkerPlan: the cores, fewer under a memory limit).
    var requestedThreads: Int { singleThread ? 1 : threads ?? 0 }
    /// The cores a run without -T counts: nil for every core it may use,
    /// the physical ones with --auto-threads=physical.
    var countedCores: Int? { autoThreads == .physical ? CoreCount.physical : nil }
    /// Checksums are written and verified unless --no-check.
    var verifiesChecksums: Bool { check ?? true }
    /// Regular files are mapped unless --no-mmap.
    var mapsInput: Bool { mmap ?? true }
}

/// The flags of a `.tar.zst`'s members (issue 61, docs/members.md).
struct MemberFlags: ParsableArguments {
    @Flag(name: .customLong("members"), help: ArgumentHelp(HelpText.members))
    var listMembers = false

    @Option(name: .customLong("member"), help: ArgumentHelp(HelpText.member, valueName: "PATTERN"))
    var patterns: [String] = []
}
