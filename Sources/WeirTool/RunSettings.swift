import Weir
import WeirCLI

/// The flags of one run, resolved once into plain values (as ripgrep turns
/// its `LowArgs` into one `HiArgs`): what the modes, the jobs and the reports
/// read. ``WeirCommand`` parses and validates the command line and makes this
/// value (``WeirCommand/settings``); nothing after reads a flag group.
///
/// Each group is what one concern needs: a flag joins the group of the code
/// that reads it (or a new group, as a new mode's), as the resolved value the
/// code wants (`syncs`, not `noSync`; bytes, not a ``ByteCount``); defaults
/// that take more than the flag are resolved here, once.
///
/// Every field's initial value is its flag's default: `RunSettings()` is the
/// settings of `weir` with no argument. The defaults are written here alone:
/// ``PartReadShortcut`` starts from `RunSettings()` and sets only what its
/// grammar reads, and ``WeirCommand/settings`` takes these values where an
/// optional flag is absent; a test build compares the two on every part
/// read, so a default the parser's side changes apart fails those tests.
struct RunSettings: Sendable {
    /// Which inputs the run takes.
    struct InputPolicy: Sendable {
        /// The names on the command line; `-` is standard input.
        var files: [String] = []
        /// The lists of `--filelist`.
        var fileLists: [String] = []
        /// `-r`: the files under the folders named.
        var recursive = false
        /// `--exclude-compressed`: files whose name says they are compressed are left out.
        var excludesCompressed = false
    }

    /// Where the results go and how they are committed.
    struct OutputPolicy: Sendable {
        /// `-c` was given (the normalizer left the last of `-c` and `-o`).
        var toStdout = false
        /// `-o`, as given (`-` included).
        var path: String?
        /// `-c` or `-o -`: every result goes to standard output.
        var standardOutputRequested = false
        /// The file `-o` names, unless standard output was asked for.
        var file: String?
        /// `-f`.
        var force = false
        /// `--rm`.
        var removesInput = false
        /// Outputs are synced before they take their names, unless `--no-sync`.
        var syncs = true
        /// Stopped outputs are resumed, unless `--no-resume`.
        var resumes = true
        /// `--output-dir-flat`.
        var flatFolder: String?
        /// `--output-dir-mirror`.
        var mirrorRoot: String?
    }

    /// How to compress, before the level is resolved (which may warn).
    struct CompressionSettings: Sendable {
        /// `--level` / `-#` (or `WEIR_CLEVEL`), `--fast[=N]` and `--ultra`.
        var levelPolicy = LevelPolicy(level: nil, fast: nil, ultra: false)
        /// `-B`, in bytes.
        var chunkSize: Int?
        /// `--adapt`'s range of levels, nil without it (``WeirCommand/adaptiveLevels``).
        var adaptiveLevels: ClosedRange<Int>?
        /// `--rsyncable`.
        var rsyncable = false
        /// A seek table ends the output unless `--no-seek-table`.
        var seekTable = true
        /// A tar's member index precedes the seek table unless `--no-member-index`.
        var memberIndex = true
        /// `--index-from`: the tar `--index` reads the member index from, instead of decoding the file.
        var indexSource: String?
        /// Frames declare their content size unless `--no-content-size`.
        var writesContentSize = true
        /// `--stream-size`, in bytes.
        var streamSize: Int?
        /// `--size-hint`, in bytes.
        var sizeHint: Int?
        /// `--format`, zstd by default.
        var format = CompressedFormat.zstd
        /// The parameters of `--zstd=` and its kin; nil when a list is not valid.
        var parameters: CompressionParameters? = CompressionParameters()
        /// `--show-default-cparams`.
        var showsDefaultParameters = false
    }

    /// How to decompress.
    struct DecompressionSettings: Sendable {
        /// `--[no-]pass-through`; nil for zstd's default.
        var passThrough: Bool?
        /// `--[no-]sparse`; nil for the default.
        var sparse: Bool?
        /// The lists of `--range`.
        var ranges: [String] = []
    }

    /// Dictionaries and long-distance matching.
    struct DictionarySettings: Sendable {
        /// `-D`.
        var file: String?
        /// Frames name their dictionary unless `--no-dictID`.
        var writesID = true
        /// `--patch-from`.
        var patchFrom: String?
        /// `--long[=N]`.
        var long: Int?
    }

    /// Workers, checksums and memory.
    struct ResourceSettings: Sendable {
        /// The workers -T or --single-thread ask for; 0 when the run chooses
        /// (WorkerPlan: the cores, fewer under a memory limit).
        var requestedThreads = 0
        /// Whether -T or --single-thread was given.
        var threadsGiven = false
        /// The cores a run without -T counts: nil for every core it may use,
        /// the physical ones with --auto-threads=physical.
        var countedCores: Int?
        /// Checksums are written and verified unless --no-check.
        var verifiesChecksums = true
        /// `--verify`.
        var verify = false
        /// Regular files are mapped unless --no-mmap.
        var mapsInput = true
        /// `-M`, in bytes.
        var memory: Int?
    }

    /// What weir says on stderr.
    struct Reporting: Sendable {
        /// `-q`, counted.
        var quiet = 0
        /// `-v`, counted.
        var verbose = 0
        /// `--[no-]progress`; nil to decide by the terminal.
        var progress: Bool?
        /// `--progress=json`.
        var progressJSON = false
        /// `--json`.
        var json = false
        /// `--trace`.
        var trace: String?
        /// `--fake-stderr-is-console`.
        var fakeStderrIsConsole = false
        /// `--trace-file-stat`.
        var traceFileStat = false
        /// `-V` among other flags.
        var showVersion = false
    }

    /// What the run does; compressing, as `weir` alone.
    var operation = Operation.compress
    var inputPolicy = InputPolicy()
    var outputPolicy = OutputPolicy()
    var compressionSettings = CompressionSettings()
    var decompressionSettings = DecompressionSettings()
    /// `--members` and `--member` (``MembersMode``).
    var memberSettings = MembersMode.Settings()
    var dictionarySettings = DictionarySettings()
    var resourceSettings = ResourceSettings()
    var reporting = Reporting()
    /// `-b`'s flags (``BenchmarkMode``).
    var benchmarkSettings = BenchmarkMode.Settings()
    /// The training the flags ask for (read when the operation trains); by
    /// default at the level the compression's default asks for.
    var training = DictionaryTraining(compressionLevel: CompressionSettings().levelPolicy.requested)
}
