extension WeirError {
    /// What weir was doing, a code a program can compare (`== .read`) and
    /// switch on; its description is the word messages use.
    ///
    /// A struct of codes, as ``Kind`` is: a later version adds operations
    /// without breaking a caller's `switch`, which ends in `default:`.
    public struct Operation: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, as its static member is spelled.
        private let name: String
        /// The words messages use (`read seek table`).
        public let description: String

        private init(_ name: String, _ description: String) {
            self.name = name
            self.description = description
        }

        public static let open = Self("open", "open")
        public static let create = Self("create", "create")
        public static let read = Self("read", "read")
        public static let write = Self("write", "write")
        public static let stat = Self("stat", "stat")
        public static let map = Self("map", "map")
        public static let pipe = Self("pipe", "pipe")
        public static let rename = Self("rename", "rename")
        public static let remove = Self("remove", "remove")
        public static let truncate = Self("truncate", "truncate")
        /// Making written data or a folder entry durable (`fdatasync`, `fsync`, `syncfs`).
        public static let sync = Self("sync", "sync")
        /// Deriving an output name from an input name.
        public static let nameOutput = Self("nameOutput", "name output")
        public static let compress = Self("compress", "compress")
        public static let decompress = Self("decompress", "decompress")
        public static let test = Self("test", "test")
        public static let list = Self("list", "list")
        public static let scan = Self("scan", "scan")
        public static let run = Self("run", "run")
        public static let train = Self("train", "train")
        /// Decoding a frame just compressed and comparing it with its input.
        public static let verify = Self("verify", "verify")
        /// Copying input that is not zstd through (`--pass-through`).
        public static let copy = Self("copy", "copy")
        public static let readSeekTable = Self("readSeekTable", "read seek table")
        public static let writeSeekTable = Self("writeSeekTable", "write seek table")
        /// The tar member index (docs/members.md).
        public static let readMemberIndex = Self("readMemberIndex", "read member index")
        public static let writeMemberIndex = Self("writeMemberIndex", "write member index")
        /// `-r`, `--filelist`, `--output-dir-mirror`.
        public static let openDirectory = Self("openDirectory", "open directory")
        public static let readDirectory = Self("readDirectory", "read directory")
        public static let createDirectory = Self("createDirectory", "create directory")
        public static let readFileList = Self("readFileList", "read file list")
        public static let readDictionary = Self("readDictionary", "read dictionary")
        public static let loadDictionary = Self("loadDictionary", "load dictionary")
        public static let useDictionary = Self("useDictionary", "use the dictionary")
        public static let readSample = Self("readSample", "read sample")
        /// Reading the old file of `--patch-from=OLD`.
        public static let readPatchReference = Self("readPatchReference", "read the --patch-from file")
        /// Setting a libzstd parameter; the text says which (`set level`).
        public static func setParameter(_ what: String) -> Self { Self("setParameter", what) }
    }
}
