/// How ``DecompressionPipeline`` decompresses.
public struct DecompressionOptions: Sendable, Equatable {
    /// Whether content checksums are verified (`--no-check` turns it off).
    public var verifyChecksum: Bool
    /// The most memory a frame's window may take, in bytes (`-M`): a frame
    /// whose header asks for more (for a single-segment frame, whose content
    /// is larger) is refused, on every decoding path; nil keeps libzstd's
    /// default limit of 128 MiB (windowLog 27). Also the in-flight budget.
    public var memoryLimit: Int?
    /// The size of each read of compressed input.
    public var readSize: Int
    /// Decoding workers for independent frames; 0 means one per core.
    public var threads: Int
    /// Whether ``ParallelDecompressionPipeline`` memory-maps a regular input
    /// file rather than reading it through DispatchIO (`--no-mmap` turns it
    /// off); ``DecompressionPipeline`` always reads through its channel.
    public var mapInput: Bool

    /// Creates options; every parameter has zstd's default.
    public init(verifyChecksum: Bool = true, memoryLimit: Int? = nil, readSize: Int = 1 << 20, threads: Int = 0,
                mapInput: Bool = true) {
        self.mapInput = mapInput
        self.verifyChecksum = verifyChecksum
        self.memoryLimit = memoryLimit
        self.readSize = readSize
        self.threads = threads
    }

    /// `threads`, with 0 resolved to the number of online cores.
    public var resolvedThreads: Int {
        threads > 0 ? threads : CompressionOptions.onlineCores
    }

    /// The most bytes of frames being decoded or written at once (compressed
    /// and decompressed): `memoryLimit` when given, otherwise 16 MiB per
    /// worker plus two (one frame being read, one being written), at least
    /// 64 MiB: room for several of weir's 8 MiB frames per worker.
    public var inFlightBudget: Int {
        if let memoryLimit { return max(1 << 20, memoryLimit) }
        return max(64 << 20, (resolvedThreads + 2) * (16 << 20))
    }

    /// The largest frame decoded whole in parallel (compressed bytes, or the
    /// most its blocks can hold once decoded); larger frames, and frames that
    /// do not say their size, stream through one decoder in bounded memory.
    public var parallelFrameLimit: Int { max(64 << 10, inFlightBudget / 4) }

    /// The window limit matching `memoryLimit`.
    var windowLimit: WindowLimit { WindowLimit(memoryLimit: memoryLimit) }
}
