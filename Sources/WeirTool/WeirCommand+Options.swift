import ArgumentParser
import Weir
import WeirCLI

// The flags of `weir`, in the groups `--help` shows them in. WeirCommand
// pulls each group in with @OptionGroup(title:) and reads a flag through its
// group (`outputFlags.force`); the extensions at the end resolve the
// defaults that take more than the flag (`resourceFlags.resolvedThreads`).

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
        case .list: "List the frames of compressed files (sizes, ratio, check); -v: zstd's details, then one row per frame."
        case .index: "Make multi-frame zstd files seekable in place, without recompressing: append one seek table that lists every frame (pzstd's files, concatenations), so any reader of zstd's seekable format jumps to a range."
        case .train: "Train a dictionary from the FILEs (one sample per file, or -B SIZE samples; at least 5), written to -o DICT (default: dictionary), as zstd --train: fastCover, a search of k with d=8, f=20, steps=4, split=75, accel=1 (after another --train flag: that one's builder)."
        case .trainCover: "Train with the cover builder: --train-cover[=LIST], LIST of k=N, d=N, steps=N, split=N (percent), shrink[=N], comma-separated; without k or d, a search (by default of d 6 and 8, 40 steps of k, split=100)."
        case .trainFastCover: "Train with the fastCover builder: --train-fastcover[=LIST], LIST of k=N, d=N, f=N, steps=N, split=N, accel=N (1 to 10), shrink[=N]; without k or d, a search (by default of d 6 and 8, 40 steps of k; f=20, split=75, accel=1)."
        case .trainLegacy: "Train with the legacy builder: --train-legacy[=s=N], or -sN, selectivity N (default 9)."
        case .benchmark: "Benchmark, as zstd -b: compress and decompress the FILEs in memory at levels -b# (default 3) to -e#, weir's parallel frames beside libzstd's own call for the same settings (no FILE: a generated sample)."
        }
    }

    /// Whether the operation trains a dictionary.
    var isTraining: Bool { [.train, .trainCover, .trainFastCover, .trainLegacy].contains(self) }
}

/// What to do with the inputs.
struct OperationFlags: ParsableArguments {
    @Flag(exclusivity: .chooseLast)
    var operation: Operation = .compress

    @Flag(name: [.customShort("r"), .customLong("recursive")], help: "Process the files in the folders given, and in their folders (symbolic links found are skipped unless -f).")
    var recursive = false

    @Option(name: .customLong("filelist"), help: ArgumentHelp("Also process the files named in FILE, one per line (repeatable).", valueName: "FILE"))
    var fileLists: [String] = []

}

/// zstd's benchmark flags (with `-b`).
struct BenchmarkFlags: ParsableArguments {
    @Option(name: .customShort("e"), help: ArgumentHelp("Benchmark every level from -b# to N.", valueName: "N"))
    var lastLevel: Int?

    @Option(name: .customShort("i"), help: ArgumentHelp("Benchmark: run each measurement at least N seconds, its fastest run counting (default 3; 0: once).", valueName: "N"))
    var seconds: Int?

    @Flag(name: .customShort("S"), help: "Benchmark each file on its own (default: all the files as one sample).")
    var separateFiles = false

    @Option(name: .customLong("priority"), help: ArgumentHelp("Benchmark at the highest scheduling priority, as zstd's --priority=rt (root only).", valueName: "rt"))
    var priority: String?
}

/// Where the results go.
struct OutputFlags: ParsableArguments {
    @Flag(name: [.customShort("c"), .customLong("stdout")], help: "Write to standard output.")
    var toStdout = false

    @Option(name: [.customShort("o"), .customLong("output")], help: ArgumentHelp("Write the result to FILE; - is standard output. Several inputs are written into FILE in turn, as zstd does (asked without -f; --rm then keeps them).", valueName: "FILE"))
    var output: String?

    @Flag(name: [.short, .long], help: "Overwrite existing files; read or write compressed data on a terminal.")
    var force = false

    @Flag(name: [.short, .long], help: "Keep the input files (the default).")
    var keep = false

    @Flag(name: .customLong("rm"), help: "Remove each input file after it was processed successfully (of -k and --rm, the last one wins).")
    var removeInput = false

    @Flag(name: .customLong("no-sync"), help: "Do not wait for outputs to reach the disk before they take their names and inputs are removed: faster on many small files, but a power cut can then lose an output or, with --rm, its input.")
    var noSync = false

    @Flag(name: .customLong("no-resume"), help: "Compressing or decompressing a file to a file, do not keep what is done when stopped: by default the output is written as NAME.part (with a record, .NAME.part.resume) and a stopped run (Ctrl-C, a kill, a power cut) leaves it, synced every 2 s, for the same command to go on from there. Decompression resumes files weir wrote in 8 frames or more (their seek table says so), not single-frame ones. Compressing with -r, an existing output that is already the input's finished compression is then skipped, not refused (a stopped -r run again).")
    var noResume = false

    @Option(name: .customLong("output-dir-flat"), help: ArgumentHelp("Write every output into DIR (an existing folder), under its own name without its folders.", valueName: "DIR"))
    var outputDirFlat: String?

    @Option(name: .customLong("output-dir-mirror"), help: ArgumentHelp("Write every output under DIR, in the folders of its input (created with their modes; an input with .. is refused).", valueName: "DIR"))
    var outputDirMirror: String?
}

/// How to compress.
struct CompressionFlags: ParsableArguments {
    @Option(name: .customLong("level"), help: ArgumentHelp("The compression level, 1 to 19 (default 3), 20 to 22 with --ultra; -# is the same (-19), as in zstd.", valueName: "#"))
    var level: Int?

    @Flag(name: .customLong("ultra"), help: "Allow levels 20 to 22 (more memory).")
    var ultra = false

    @Option(name: .customLong("fast"), help: ArgumentHelp("Faster, negative levels: --fast[=N], N >= 1 (default 1).", valueName: "N"))
    var fast: Int?

    @Option(name: [.customShort("B"), .customLong("chunk-size")], help: ArgumentHelp("Input bytes per independent frame (default by level: 8MiB, 16MiB at -7 and -8, 32MiB from -9, 64MiB from -17, 256MiB and 512MiB with --ultra, 8MiB with --adapt; a smaller file is cut into one frame per worker, from -17 not below 4 windows as zstd -T); -B is zstd's job size. Training: cut each file into samples of SIZE, at most 128K (0: one sample per file).", valueName: "SIZE"))
    var chunkSize: ByteCount?

    @Flag(name: .customLong("adapt"), help: "Adapt the level to how fast the output drains: --adapt[=min=N,max=N] (default: every level, from the one chosen, default 3). Each frame's level is chosen as it starts, from how busy the workers and the output are; -v says each change. Not resumable.")
    var adapt = false

    @Flag(name: .customLong("rsyncable"), help: "Cut frames where the content says, so that a change early in the input leaves later frames byte-identical (for rsync and deduplicating backups); frames average --chunk-size, up to twice it.")
    var rsyncable = false

    @Flag(name: .customLong("no-seek-table"), help: "Do not end the output with a seek table (zstd's seekable format).")
    var noSeekTable = false

    @Flag(inversion: .prefixedNo, help: "Write each frame's decompressed size in its header (default: on; without it, weir -d decodes frames one at a time).")
    var contentSize: Bool?

    @Option(name: .customLong("stream-size"), help: ArgumentHelp("The exact size of a piped input: another size is an error (files: ignored).", valueName: "SIZE"))
    var streamSize: ByteCount?

    @Option(name: .customLong("format"), help: ArgumentHelp("The compressed format written: zstd, or gzip, xz, lz4 (independent members, side by side on -T workers) and lzma (one stream); -d reads all five by magic.", valueName: "FORMAT"))
    var format: CompressedFormat?

    @Flag(name: .customLong("exclude-compressed"), help: "Skip inputs that are already compressed: .zst .tzst .gz .tgz .lzma .xz .txz .lz4 .tlz4.")
    var excludeCompressed = false

    @Option(name: .customLong("zstd"), help: ArgumentHelp("libzstd's parameters over the level's, as zstd: wlog=, clog=, hlog=, slog=, mml=, tlen=, strat=, lhlog=, lmml=, lblog=, lhrlog= (or windowLog=, chainLog=...); ovlog= is accepted and does nothing (weir's frames do not overlap). Decompressing, wlog=N sets the memory limit as --long=N.", valueName: "LIST"))
    var zstdParameters: [String] = []

    @Flag(inversion: .prefixedNo, help: "Always (or never) compress literals with Huffman (default: as the level does).")
    var compressLiterals: Bool?

    @Flag(inversion: .prefixedNo, help: "Always (or never) use the row-based match finder of the greedy, lazy and lazy2 strategies (the middle levels; default: as libzstd decides).")
    var rowMatchFinder: Bool?

    @Option(name: .customLong("target-compressed-block-size"), help: ArgumentHelp("Aim every compressed block at about SIZE bytes, 64 to 128KiB (0: full blocks, the default): a streaming reader gets data sooner, the ratio drops a little.", valueName: "SIZE"))
    var targetCompressedBlockSize: ByteCount?

    @Flag(name: .customLong("show-default-cparams"), help: "Print, for each file, the parameters libzstd picks for its level and size, then compress it.")
    var showDefaultCParams = false
}

/// How to decompress.
struct DecompressionFlags: ParsableArguments {
    @Flag(inversion: .prefixedNo, help: "Copy input that is not zstd to the output unchanged, as zcat -f (default: with -dcf).")
    var passThrough: Bool?

    @Flag(inversion: .prefixedNo, help: "Make holes of the zero blocks of the output (default: on for files, off for stdout).")
    var sparse: Bool?

    @Option(name: .customLong("range"), help: ArgumentHelp("Decompress only these bytes of the content: START:END (END excluded), START:+LENGTH, START: or :END, sizes with K, M, G, T (1G:+1M), comma-separated or repeated; written in the order given, to standard output unless -o. From a file, only the frames holding them are read and decoded (a seek table finds them at once); from a pipe, in increasing order, the bytes before are decoded and dropped.", valueName: "LIST"))
    var ranges: [String] = []
}

/// Dictionaries and long-distance matching, as zstd spells them.
struct DictionaryFlags: ParsableArguments {
    @Option(name: [.customShort("D"), .customLong("dictionary")], help: ArgumentHelp("Compress or decompress every frame with the dictionary DICT (from zstd --train or weir --train).", valueName: "DICT"))
    var dictionaryFile: String?

    @Flag(name: .customLong("no-dictID"), help: "With -D, leave the dictionary's ID out of every frame header (decoding then needs the right -D without a check).")
    var noDictionaryID = false

    @Option(name: .customLong("maxdict"), help: ArgumentHelp("The largest dictionary training makes (default 112640).", valueName: "SIZE"))
    var maxDictionary: ByteCount?

    @Option(name: .customLong("dictID"), help: ArgumentHelp("The ID of the dictionary training makes, which frames compressed with it carry (default: a hash of its content, 32768 to 2^31-1; zstd reserves the IDs outside for public dictionaries).", valueName: "N"))
    var dictionaryID: ByteCount?

    @Option(name: .customLong("long"), help: ArgumentHelp("Long-distance matching with a 2^N-byte window: --long[=N], N from 10 to 31 (default 27). Each frame's chunk becomes at least the window, so memory is (threads + 1) x 2 x 2^N. Decompressing, accept windows up to 2^N (as -M).", valueName: "N"))
    var long: Int?
}

/// What both directions share: workers, checksums, memory.
struct ResourceFlags: ParsableArguments {
    @Option(name: [.customShort("T"), .customLong("threads")], help: ArgumentHelp("Worker threads; 0 means one per core this process may use (the default: its CPU affinity and cgroup CPU quota counted, fewer under a cgroup memory limit; -v says which limit chose). Training: the parameters tried side by side (default 1, as zstd).", valueName: "N"))
    var threads: Int?

    @Flag(name: .customLong("single-thread"), help: "One worker, as -T1 (of -T and --single-thread, the last one wins).")
    var singleThread = false

    @Option(name: .customLong("auto-threads"), help: ArgumentHelp("What -T0 counts (default: logical, every core weir may use).", valueName: "physical|logical"))
    var autoThreads: AutoThreads?

    @Flag(name: [.customShort("C"), .customLong("check")], inversion: .prefixedNo, help: "Write (compress) or verify (decompress) content checksums (default: on).")
    var check: Bool?

    @Flag(name: .customLong("verify"), help: "Compressing: decode every frame and compare it with its input before it is written; a frame that differs fails its file, which is not written, and its input is kept (also with --rm). Decompressing and testing, the content checksums are this check (so --verify cannot go with --no-check there).")
    var verify = false

    @Option(name: [.customShort("M"), .customLong("memory"), .customLong("memlimit"), .customLong("memlimit-decompress")], help: ArgumentHelp("Decompression memory: frames in flight, their buffers and the frame being read (default 8MiB per thread and 16MiB more; for larger frames, as weir writes from -9, one frame per thread and one more, up to 256MiB), and the largest window a frame may use (default 128MiB; under a cgroup memory limit below 256MiB, about half of it). Training: the most sample bytes loaded.", valueName: "SIZE"))
    var memory: ByteCount?

    @Flag(inversion: .prefixedNo, help: "Map regular input files into memory rather than read() them (default: on; pipes are always read).")
    var mmap: Bool?

    @Flag(inversion: .prefixedNo, help: "Accepted for zstd's scripts: weir's reads and writes always overlap the work (DispatchIO).")
    var asyncio: Bool?
}

/// What weir says on stderr.
struct MessageFlags: ParsableArguments {
    @Flag(name: [.short, .long], help: "Quieter: no summary; twice: no warnings either.")
    var quiet: Int

    @Flag(name: [.short, .long], help: "More verbose.")
    var verbose: Int

    @Flag(inversion: .prefixedNo, help: "Show a live progress line on stderr (default: when stderr is a terminal). --progress=json: one JSON object per line instead, four a second and one as each file ends (keys under PROGRESS FOR PROGRAMS).")
    var progress: Bool?

    @Option(name: .customLong("size-hint"), help: ArgumentHelp("The input's size when it cannot be known (a pipe), for the progress percentage; as zstd, libzstd sizes a piped input of one frame's tables for it.", valueName: "SIZE"))
    var sizeHint: ByteCount?

    @Flag(name: .customLong("json"), help: "Instead of the summary, one JSON object per input on stderr, and a total.")
    var json = false

    @Option(name: .customLong("trace"), help: ArgumentHelp("Append one CSV line per frame compressed or decompressed to FILE, as zstd's --trace (libzstd's own trace hooks).", valueName: "FILE"))
    var trace: String?

    @Flag(name: .customLong("fake-stderr-is-console"), help: "zstd's test hook: decide on the progress line and the summaries as if stderr were a terminal.")
    var fakeStderrIsConsole = false

    @Flag(name: .customLong("trace-file-stat"), help: "zstd's test hook: print on stderr, in zstd's words, each check of a file's status the command makes (terminals, links, existing outputs).")
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
