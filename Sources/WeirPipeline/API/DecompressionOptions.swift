import WeirFiles
import WeirFormats

/// How ``Decompressor``, ``SeekableReader`` and ``SeekTableAppender`` decompress.
public struct DecompressionOptions: Sendable, Equatable {
    /// Whether content checksums are verified (`--no-check` turns it off).
    public var verifyChecksum: Bool
    /// The most memory a frame's window may take, in bytes (`-M`): a frame
    /// whose header asks for more (for a single-segment frame, whose content
    /// is larger) is refused, on every decoding path; nil keeps libzstd's
    /// default limit of 128 MiB (windowLog 27). Also the memory budget,
    /// `inFlightBudget`.
    public var memoryLimit: Int?
    /// The size of each read of compressed input (default 256 KiB): a frame
    /// holds the read pieces it spans until it is decoded, so smaller pieces
    /// waste less around the frames in flight (docs/decompression.md).
    public var readSize: Int
    /// Decoding workers for independent frames; 0 means one per core this
    /// process may use, fewer where a cgroup's memory limit would not hold
    /// them (``Decompressor`` plans them for each run, and without a
    /// ``memoryLimit`` takes one that fits the cgroup's).
    public var threads: Int
    /// Whether `DecompressionPipeline` memory-maps a regular input
    /// file rather than reading it through DispatchIO (`--no-mmap` turns it
    /// off); a pipe is always read through its channel.
    public var mapInput: Bool
    /// Whether a pipe (or an unmapped file) is read in buffers of
    /// ``readSize``, one buffer per read, rather than libdispatch's default
    /// of 1 MiB. Off by default: libdispatch's read-buffer size is one for
    /// the whole process, so each run that asks sets it to its own reads,
    /// and runs side by side that read other sizes get it too (their bytes
    /// are the same, their reads larger or smaller). The `weir` command turns
    /// it on for every run, as for compression
    /// (``CompressionOptions/sizesReadBuffers``).
    public var sizesReadBuffers = false
    /// Whether an input that does not start with a zstd or skippable frame is
    /// copied to the output unchanged instead of refused, as `zcat -f` does
    /// (zstd's `--pass-through`, on by default for `-dcf`). `FileJob`
    /// decides, from the input's first four bytes; the pipelines never see
    /// such an input.
    public var passThrough: Bool
    /// Whether runs of zero blocks in the output become holes when the output
    /// is a regular file (zstd's `--sparse`; see `OrderedWriter`).
    public var sparse: Bool

    /// The dictionary the frames were compressed with (`-D`), or nil.
    public var dictionary: ZstdDictionary?
    /// `--patch-from=OLD`: the old file the frame was compressed against,
    /// its prefix (`DecompressionContext`). A patch is one frame, decoded
    /// by one worker, streamed; the memory limit is raised to the old file's
    /// size, as zstd raises it.
    public var patchReference: PatchReference?
    /// `--long=N`: without `memoryLimit`, frames may use a window of up to
    /// 2^N bytes (as `zstd -d --long=N`); the in-flight budget is unchanged.
    public var longWindowLog: Int?
    /// Keep what a file-to-file run finished when it is stopped, for the
    /// same run to go on from there (the command line's default): the
    /// content of the whole frames decoded is written as `NAME.part` with a
    /// record beside it, `.NAME.part.resume`. Only for an input that weir
    /// wrote in 8 frames or more, which its seek table says.
    public var resumable = false
    // The test hooks: nil unless the executable's test build sets them from
    // its WEIR_TEST_* environment (Package.swift, `testHooks`); nothing
    // else can.
    /// For tests of resuming only: the reading thread waits this long
    /// (seconds) after each frame it cuts, so that a run lasts long enough
    /// to be stopped after a checkpoint.
    package var frameDelayForTesting: Double?
    /// For tests of the progress line only: seconds a decoder waits after
    /// each step of input it decoded (`WorkTally`), so a test can read
    /// the line at several moments of a slow run.
    package var stepDelayForTesting: Double?
    /// For tests of the progress line only: after each step, a decoder
    /// waits while this file exists (``StepHold``).
    package var stepHoldForTesting: String?
    /// For tests of resuming only: a resumable output's checkpoints come
    /// at least this often (seconds; ``PartialOutput/interval`` without),
    /// so that a short run can be stopped after one.
    package var checkpointIntervalForTesting: Double?

    /// Creates options; every parameter has zstd's default.
    public init(verifyChecksum: Bool = true, memoryLimit: Int? = nil, readSize: Int = 256 << 10, threads: Int = 0,
                mapInput: Bool = true, passThrough: Bool = false, sparse: Bool = false,
                dictionary: ZstdDictionary? = nil, longWindowLog: Int? = nil) {
        self.dictionary = dictionary
        self.longWindowLog = longWindowLog
        self.mapInput = mapInput
        self.passThrough = passThrough
        self.sparse = sparse
        self.verifyChecksum = verifyChecksum
        self.memoryLimit = memoryLimit
        self.readSize = readSize
        self.threads = threads
    }

    /// What makes the output of a decompression what it is besides its
    /// input, as one line: the dictionary (its ID, size and a hash of its
    /// bytes). The content of zstd frames does not depend on the decoder,
    /// so one run may finish what another began (``PartialOutput``); the
    /// word `decompress` keeps a compression's record from ever matching.
    package var resumeFingerprint: String {
        "decompress dictionary=\(ResumeRecord.fingerprint(of: dictionary))"
    }

    /// `threads`, with 0 resolved to the cores this process may use.
    package var resolvedThreads: Int {
        if patchReference != nil { return 1 }
        return threads > 0 ? threads : CompressionOptions.availableCores
    }

    /// The memory that `DecompressionPipeline` holds for the work
    /// in flight (compressed frames until decoded, output buffers from
    /// mapping to unmapping, a streamed frame's window): `memoryLimit` less
    /// `readingReserve` (at most half of it; at least 1 MiB), so that `-M`
    /// covers the reading side too; otherwise `defaultBudgetPerThread` for
    /// each worker and one more: every worker decodes one of weir's 8 MiB
    /// frames while the next waits for the buffer the writer gives back
    /// (the same as `-M` of 8 MiB per worker and 16 MiB more).
    package var inFlightBudget: Int {
        if let memoryLimit { return max(1 << 20, memoryLimit - min(Self.readingReserve, memoryLimit / 2)) }
        return (resolvedThreads + 1) * Self.defaultBudgetPerThread
    }

    /// The default budget's share per worker: one 8 MiB output buffer (the
    /// compressed bytes of the frames fit in the extra share).
    package static let defaultBudgetPerThread = 8 << 20

    /// The part of `memoryLimit` left to what the budget does not count: the
    /// compressed frame being read until it is handed out, the next read,
    /// the read pieces that frames in flight share (one compressed 8 MiB
    /// chunk at worst).
    package static let readingReserve = 8 << 20

    /// The most the budget grows to for a stream of frames larger than
    /// ``defaultBudgetPerThread`` (weir's own from `-9` up: "Frames sized by
    /// level" in docs/design.md), without `memoryLimit`: 256 MiB, or less
    /// under a cgroup's memory limit (`WorkerPlan`).
    package var largeFrameBudget = 256 << 20

    /// The largest frame decoded whole in parallel: its output buffer (its
    /// declared size, or the most its blocks can hold, in its size class:
    /// `FrameBuffers.bufferSize(for:)`) and its compressed bytes each at
    /// most half the budget, so that it always fits: an 8 MiB frame from a
    /// budget of 16 MiB up (`-M 24MiB`, the default with one worker). Larger
    /// frames stream through one decoder.
    package var parallelFrameLimit: Int { Self.parallelFrameLimit(budget: inFlightBudget) }

    /// The parallel frame limit of a budget of `budget` bytes.
    package static func parallelFrameLimit(budget: Int) -> Int { max(64 << 10, budget / 2) }

    /// The window limit matching `memoryLimit`, else `longWindowLog`.
    package var windowLimit: WindowLimit { WindowLimit(memoryLimit: patchMemoryLimit, longWindowLog: longWindowLog) }

    /// ``memoryLimit``, raised under ``patchReference`` to cover the old
    /// file (nil: libzstd's 128 MiB), as zstd's
    /// `FIO_adjustMemLimitForPatchFromMode` raises it; to the window a patch
    /// of a new file of the old one's size declares (the power of two above
    /// it), which zstd's own limit, the old file's size, would refuse.
    var patchMemoryLimit: Int? {
        guard let patchReference else { return memoryLimit }
        let limit = memoryLimit ?? 1 << 27
        return max(limit, 1 << patchReference.windowLog(newSize: nil))
    }
}
