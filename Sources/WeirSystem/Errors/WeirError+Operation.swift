extension WeirError {
    /// What weir was doing: one of a fixed set, so that a program can switch
    /// on it; its description is the word messages use.
    public enum Operation: Equatable, Sendable, CustomStringConvertible {
        case open, create, read, write, stat, map, pipe, rename, remove, truncate
        /// Making written data or a folder entry durable (`fdatasync`, `fsync`, `syncfs`).
        case sync
        /// Deriving an output name from an input name.
        case nameOutput
        case compress, decompress, test, list, scan, run, train
        /// Decoding a frame just compressed and comparing it with its input.
        case verify
        /// Copying input that is not zstd through (`--pass-through`).
        case copy
        case readSeekTable, writeSeekTable
        /// The tar member index (docs/members.md).
        case readMemberIndex, writeMemberIndex
        /// `-r`, `--filelist`, `--output-dir-mirror`.
        case openDirectory, readDirectory, createDirectory, readFileList
        case readDictionary, loadDictionary, useDictionary, readSample
        /// Reading the old file of `--patch-from=OLD`.
        case readPatchReference
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
            case .sync: "sync"
            case .nameOutput: "name output"
            case .compress: "compress"
            case .decompress: "decompress"
            case .test: "test"
            case .list: "list"
            case .scan: "scan"
            case .run: "run"
            case .train: "train"
            case .verify: "verify"
            case .copy: "copy"
            case .readSeekTable: "read seek table"
            case .writeSeekTable: "write seek table"
            case .readMemberIndex: "read member index"
            case .writeMemberIndex: "write member index"
            case .openDirectory: "open directory"
            case .readDirectory: "read directory"
            case .createDirectory: "create directory"
            case .readFileList: "read file list"
            case .readDictionary: "read dictionary"
            case .loadDictionary: "load dictionary"
            case .useDictionary: "use the dictionary"
            case .readSample: "read sample"
            case .readPatchReference: "read the --patch-from file"
            case .setParameter(let what): what
            }
        }
    }
}
