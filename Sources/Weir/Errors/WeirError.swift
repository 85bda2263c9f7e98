import Glibc

/// The one error type of the Weir library.
///
/// Every error carries the file it concerns (`path`, as the caller named it:
/// `(stdin)` and `(stdout)` for the standard streams), the operation that failed, and a reason. Its `description`
/// reads `FILE: reason`, which the command line prints after `weir: `.
public struct WeirError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What went wrong, in a form a program can switch on.
    public enum Kind: Equatable, Sendable {
        /// A system call failed with this `errno`.
        case system(errno: Int32)
        /// The input does not start with a zstd or skippable frame magic number.
        case notZstd
        /// The compressed input ends in the middle of a frame.
        case truncated
        /// libzstd rejected the compressed data.
        case corrupt
        /// A frame's content checksum does not match its content.
        case checksumMismatch
        /// The output file exists and `force` was not given.
        case outputExists
        /// The output path names the input file.
        case sameFile
        /// Decompression cannot derive an output name from this suffix.
        case unknownSuffix
        /// Refused to read or write compressed data on a terminal.
        case terminal
        /// The input is not a regular file (a directory, for example).
        case notRegularFile
        /// The run was cancelled (for example by a signal).
        case cancelled
        /// libzstd failed for a reason other than bad data (memory, parameters).
        case library
        /// A frame needs more memory than the budget allows.
        case memoryLimit
        /// The input's size is not the one declared for it (`--stream-size`).
        case sizeMismatch
        /// No output name can be derived from this input's path (a `..` part
        /// under `--output-dir-mirror`), or a file list cannot be used.
        case unusablePath
    }

    /// What weir was doing: one of a fixed set, so that a program can switch
    /// on it; its description is the word messages use.
    public enum Operation: Equatable, Sendable, CustomStringConvertible {
        case open, create, read, write, stat, map, pipe, rename, remove, truncate
        /// Deriving an output name from an input name.
        case nameOutput
        case compress, decompress, test, list, scan, run, train
        /// Copying input that is not zstd through (`--pass-through`).
        case copy
        case readSeekTable, writeSeekTable
        /// `-r`, `--filelist`, `--output-dir-mirror`.
        case openDirectory, readDirectory, createDirectory, readFileList
        case readDictionary, loadDictionary, useDictionary, readSample
        /// Setting a libzstd parameter; the text says which (`set level`).
        case setParameter(String)

        public var description: String {
            switch self {
            case .open: "open"
            case .create: "create"
            case .read: "read"
            case .write: "write"
            case .stat: "stat"
            case .map: "map"
            case .pipe: "pipe"
            case .rename: "rename"
            case .remove: "remove"
            case .truncate: "truncate"
            case .nameOutput: "name output"
            case .compress: "compress"
            case .decompress: "decompress"
            case .test: "test"
            case .list: "list"
            case .scan: "scan"
            case .run: "run"
            case .train: "train"
            case .copy: "copy"
            case .readSeekTable: "read seek table"
            case .writeSeekTable: "write seek table"
            case .openDirectory: "open directory"
            case .readDirectory: "read directory"
            case .createDirectory: "create directory"
            case .readFileList: "read file list"
            case .readDictionary: "read dictionary"
            case .loadDictionary: "load dictionary"
            case .useDictionary: "use the dictionary"
            case .readSample: "read sample"
            case .setParameter(let what): what
            }
        }
    }

    /// What went wrong.
    public var kind: Kind
    /// The file concerned, as the caller named it.
    public var path: String
    /// The operation that failed.
    public var operation: Operation
    /// A human-readable reason, without the path (it names the frame and
    /// offset too, when they are known).
    public var reason: String
    /// The index of the frame the error is in, when it is known.
    public var frame: Int?
    /// The offset in the stream where that frame starts, when it is known.
    public var offset: Int?

    /// Creates an error.
    public init(_ kind: Kind, path: String, operation: Operation, reason: String, frame: Int? = nil, offset: Int? = nil) {
        self.kind = kind
        self.path = path
        self.operation = operation
        self.reason = reason
        self.frame = frame
        self.offset = offset
    }

    /// An error for a failed system call, with the reason taken from `strerror`.
    public static func system(_ code: Int32, path: String, operation: Operation) -> WeirError {
        let text = String(cString: strerror(code))
        return WeirError(.system(errno: code), path: path, operation: operation,
                         reason: "\(operation) failed: \(text)")
    }

    /// `FILE: reason`, as the command line prints it after `weir: `; the
    /// name as ``FileName/displayed(_:)`` shows it.
    public var description: String {
        "\(FileName.displayed(path)): \(reason)"
    }

    /// Whether this error means that the downstream of a pipe went away.
    public var isBrokenPipe: Bool {
        kind == .system(errno: EPIPE)
    }
}
