import WeirFiles
import WeirFormats
import WeirSystem

/// How ``Compressor`` compresses, and every compression pipeline the engine runs.
public struct CompressionOptions: Sendable, Equatable {
    /// The default chunk (and frame) size of levels up to 6 and `--fast`
    /// (levels 7 and 8 take 16 MiB, higher ones more): 8 MiB. Independent
    /// frames of that size cost little ratio against one frame
    /// (bench/results/2026-11-27-comment-numbers.md, "Frame sizes"), and give
    /// every core work even on mid-sized files. Higher levels:
    /// ``defaultChunkSize(level:)``.
    public static let defaultChunkSize = 8 << 20

    /// The default chunk at `level`: 8 MiB (``defaultChunkSize``) while the
    /// level's window is 2 MiB or less (weir gives those levels a 4 MiB
    /// window), but 16 MiB at levels 7 and 8, whose lazy matches find more
    /// over four of those windows; else eight of the level's windows (32 MiB
    /// at levels 9–16, 64 MiB at 17–19, 256 MiB at 20), never above zstd's
    /// largest job (512 MiB, at 21 and 22): the chunks in flight are memory.
    ///
    /// An independent frame cannot refer before its start, so a frame of a
    /// few windows loses what a stream would find across its boundary:
    /// zstd -T2 cuts jobs of four windows but hands each the previous
    /// window (overlap), and weir's frames need twice that to match it
    /// (docs/design.md, "Frames sized by level";
    /// bench/results/2026-11-26-frames.md).
    public static func defaultChunkSize(level: Int) -> Int {
        let windowLog = CompressionParameters().resolved(level: level, size: nil).windowLog
        guard windowLog > 21 else { return (7 ... 8).contains(level) ? 2 * defaultChunkSize : defaultChunkSize }
        return min(1 << (windowLog + 3), largestLevelChunk)
    }

    /// The compression level, from libzstd's lowest (negative: `--fast`,
    /// down to -131072) to 22. Default 3.
    public var level: Int
    /// Compression workers; 0 means one per core this process may use
    /// (its affinity mask and its cgroup's CPU quota counted), fewer (and
    /// smaller chunks) where a cgroup's memory limit would not hold them:
    /// ``Compressor`` plans them for each run.
    public var threads: Int
    /// The bytes of input in each independent frame; by default the
    /// level's (``defaultChunkSize(level:)``), chosen when the options are
    /// made: setting ``level`` later keeps it.
    public var chunkSize: Int
    /// Whether each frame carries the XXH64 content checksum.
    public var checksum: Bool
    /// The most chunks read but not yet written; nil picks `threads + 1`.
    public var chunksInFlight: Int?
    /// Whether a seek table (zstd's seekable format) follows the last frame
    /// of an output of several frames (`--no-seek-table` leaves it out); an
    /// output of one frame has nothing to seek and never has one.
    public var seekTable: Bool
    /// Whether a content that is a tar stream gets a member index, written
    /// just before the seek table (docs/members.md; `--no-member-index`
    /// leaves it out). Without a seek table there is none.
    public var memberIndex = true
    /// Whether a regular input file is memory-mapped rather than read
    /// through DispatchIO (`--no-mmap` turns it off). Pipes are always read.
    public var mapInput: Bool
    /// Whether a pipe (or an unmapped file) is read in buffers of a whole
    /// chunk, so that each chunk arrives as one buffer and is compressed in
    /// place, without a copy. Off by default: libdispatch's read-buffer size
    /// is one for the whole process, so each run that asks sets it to its
    /// own reads, and runs side by side that read other sizes get it too
    /// (their bytes are the same, their reads larger or smaller). Each read
    /// takes a fresh buffer of a chunk, cheap with an allocator that reuses
    /// freed pages (jemalloc). The `weir` command turns it on for every run.
    public var sizesReadBuffers = false
    /// Whether an input of known size with fewer chunks than workers is cut
    /// into one chunk per worker instead (never below ``minimumSplitChunk``),
    /// so a small file keeps every core busy. The command line turns it off
    /// when `--chunk-size` is given.
    public var splitSmallInputs: Bool
    /// Whether each frame's header carries its decompressed size
    /// (`--no-content-size` leaves it out, as zstd's does). Without it,
    /// `DecompressionPipeline` cannot size a frame's output before
    /// decoding it, and decodes the frames one after another.
    public var contentSize: Bool
    /// The exact size of an input whose size is not known beforehand (a
    /// pipe), as zstd's `--stream-size`: it sizes the chunks as a file's size
    /// would, and `FileJob` fails when the input turns out to be of another
    /// size (standard input too when it is a regular file, as zstd).
    /// Ignored for a named regular file, whose size is known.
    public var streamSize: Int?
    /// Whether an input that makes a single frame is compressed as zstd
    /// compresses standard input, whose size it never asks: streamed, so
    /// that the header declares no size and the window is the level's for
    /// an unknown size (libzstd fits a declared frame's window to its size).
    /// The command line sets it for standard input without `--stream-size`:
    /// a small piped input then gives the bytes zstd writes. A run of
    /// several frames declares every size all the same (parallel decoding
    /// sizes each frame's output by it).
    public var streamsSoleFrame = false
    /// The size a streamed sole frame's input is expected to have, as zstd's
    /// `--size-hint` (`ZSTD_c_srcSizeHint`): libzstd sizes its tables for it
    /// and still declares no size. nil: none.
    public var streamedSizeHint: Int?
    /// Cut chunks at content-defined boundaries (`--rsyncable`, see
    /// `RsyncableChunker`): chunks of `chunkSize` on average, up to twice it.
    public var rsyncable: Bool = false

    /// The largest chunk a run reads: `chunkSize`, or twice it with `rsyncable`.
    package var largestChunk: Int { rsyncable ? 2 * chunkSize : chunkSize }
    /// The dictionary every frame is compressed with (`-D`), or nil.
    public var dictionary: ZstdDictionary?
    /// Whether frames compressed with ``dictionary`` name its ID in their
    /// header (zstd's default; `--no-dictID` leaves it out).
    public var dictionaryID: Bool = true
    /// Long-distance matching with a window of 2^N bytes (`--long[=N]`), or
    /// nil. A frame cannot refer past its own chunk, so the chunk grows to
    /// at least the window (`resolvedChunkSize`): each frame then matches
    /// across a whole window, as one `zstd --long` stream does, at the cost
    /// of `resolvedChunksInFlight` chunks of that size in memory.
    public var longWindowLog: Int?
    /// libzstd's parameters beyond the level (`--zstd=`), over what the
    /// level chooses; a window log set here wins over ``longWindowLog``'s.
    public var parameters = CompressionParameters()
    /// Decode every frame on the worker that made it and compare it with its
    /// input before it is written (`--verify`): a mismatch fails the run with
    /// the frame's offset, and nothing of that frame is written. Costs a
    /// decode per frame (about a quarter of compressing at level 3) and a
    /// buffer of one chunk per worker.
    public var verify = false
    /// Keep what a file-to-file run finished when it is stopped, for the
    /// same run to go on from there (the command line's default): the
    /// output is written as `NAME.part` with a record beside it,
    /// `.NAME.part.resume`. Needs the seek table; not with ``rsyncable``
    /// nor ``adaptiveLevels``.
    public var resumable = false
    /// `--adapt`: each frame's level is chosen when its chunk goes to the
    /// workers, within this range, from how busy the workers and the
    /// output were (one step at a time, never 0); ``level`` is the first
    /// frame's, put in the range. nil: every frame at ``level``. zstd
    /// frames only; a run that adapts is not ``resumable`` (its frames'
    /// levels are not recorded).
    public var adaptiveLevels: ClosedRange<Int>?
    // The test hooks: nil unless the executable's test build sets them from
    // its WEIR_TEST_* environment (Package.swift, `testHooks`); nothing
    // else can.
    /// For tests of ``verify`` only: flips one bit of frame N after it is
    /// compressed, before it is checked (ignored without ``verify``, which
    /// then always catches it).
    package var damagedFrameForTesting: Int?
    /// For tests of resuming only: the reading thread waits this long
    /// (seconds) after each chunk it reads, so that a run lasts long enough
    /// to be stopped after a checkpoint without compressing at -19.
    package var frameDelayForTesting: Double?
    /// For tests of the progress line only: seconds a worker waits after
    /// each step of input it compressed (``CompressionContext/consumed``),
    /// so a test can read the line at several moments of a slow run.
    package var stepDelayForTesting: Double?
    /// For tests of the progress line only: after each step, a worker
    /// waits while this file exists (``StepHold``).
    package var stepHoldForTesting: String?
    /// For tests of resuming only: a resumable output's checkpoints come
    /// at least this often (seconds; ``PartialOutput/interval`` without),
    /// so that a short run can be stopped after one.
    package var checkpointIntervalForTesting: Double?
    /// `--patch-from=OLD`: the input is compressed against the old file, as
    /// one frame (zstd's decoder uses a prefix for one frame only), by one
    /// context whose own workers (`ZSTD_c_nbWorkers`) are ``threads``, as
    /// `zstd -T N --patch-from` compresses, with zstd's window: one that
    /// reaches the whole old file (`PatchReference.windowLog(newSize:)`),
    /// with long-distance matching when zstd turns it on
    /// (`fitted(toInputSize:)`). The input's size must be known.
    public var patchReference: PatchReference?
    /// The format written (`--format=`): zstd, or independent members of
    /// gzip, xz or lz4 (``MemberEncoder``); no seek table but zstd's.
    package var format: CompressedFormat = .zstd
    /// The memory limit the run must fit (a cgroup's), which
    /// `WorkerPlan.applied(to:)` sets: an input that one worker cannot
    /// compress within it is refused before it starts (`CompressionMemory`).
    /// nil: none.
    package var memoryLimit: Int?

    /// The smallest chunk ``splitSmallInputs`` cuts: below 1 MiB, frames lose
    /// too much ratio for the time saved.
    public static let minimumSplitChunk = 1 << 20

    /// The largest chunk a level chooses: zstd -T's largest job (at -22).
    public static let largestLevelChunk = 512 << 20

    /// The largest chunk: 1 GiB (also the most `--chunk-size` accepts).
    public static let maximumChunkSize = 1 << 30

    /// The window logs `--long` accepts, libzstd's on 64-bit systems.
    public static let longWindowLogs = 10...Zstd.windowLogMax

    /// zstd's `--long` window when none is given: 2^27 (128 MiB).
    public static let defaultLongWindowLog = 27

    /// Creates options; every parameter has zstd's default, the chunk size
    /// the level's (nil: ``defaultChunkSize(level:)``).
    public init(level: Int = 3, threads: Int = 0, chunkSize: Int? = nil,
                checksum: Bool = true, chunksInFlight: Int? = nil, seekTable: Bool = true, mapInput: Bool = true,
                splitSmallInputs: Bool = true, contentSize: Bool = true, streamSize: Int? = nil,
                dictionary: ZstdDictionary? = nil, longWindowLog: Int? = nil) {
        self.dictionary = dictionary
        self.longWindowLog = longWindowLog
        self.mapInput = mapInput
        self.contentSize = contentSize
        self.streamSize = streamSize
        self.splitSmallInputs = splitSmallInputs
        self.level = level
        self.threads = threads
        self.chunkSize = chunkSize ?? Self.defaultChunkSize(level: level)
        self.checksum = checksum
        self.chunksInFlight = chunksInFlight
        self.seekTable = seekTable
    }

    /// These options with the chunk size used for an input of `size` bytes
    /// (nil: unknown, a pipe): with ``splitSmallInputs``, a file smaller than
    /// one chunk per worker is cut into one chunk per worker (rounded up to
    /// 64 KiB, at least ``minimumSplitChunk``). A 5 MB file on two cores
    /// becomes two frames compressed at once instead of one.
    ///
    /// With `--long`, a file is never cut below the window, so a file
    /// smaller than it stays one frame, matched across as a whole, in a
    /// chunk of its own size; nor from level 17 up (btultra) below zstd
    /// -T's job, four windows (32 MiB at -17…-19, 128–512 MiB with
    /// --ultra), which zstd -T keeps whole: there a frame's start costs
    /// most, and a file cut in two was larger than zstd's and held two
    /// contexts (bench/results/2026-11-27-comment-numbers.md, "Frame sizes");
    /// one frame is zstd's size on one context.
    /// The result's ``chunkSize`` is the one used (`resolvedChunkSize`).
    package func fitted(toInputSize size: Int?) -> CompressionOptions {
        if let patchReference { return fittedForPatch(against: patchReference, inputSize: size) }
        var fitted = self
        fitted.chunkSize = resolvedChunkSize
        // Under --long, a file smaller than the window is one chunk of its
        // own size (in 64 KiB), so its buffers are not the window's.
        if longWindowLog != nil, let size {
            fitted.chunkSize = min(fitted.chunkSize, (max(1, size) + 0xFFFF) & ~0xFFFF)
        }
        let chunk = fitted.chunkSize
        guard splitSmallInputs, let size, resolvedThreads > 1, size < chunk * resolvedThreads else { return fitted }
        let perWorker = (size + resolvedThreads - 1) / resolvedThreads
        let rounded = (perWorker + 0xFFFF) & ~0xFFFF
        let zstdJob = level >= 17 ? 4 << parameters.resolved(level: level, size: nil).windowLog : nil
        let smallest = longWindowLog.map { min(1 << $0, Self.maximumChunkSize) } ?? zstdJob ?? Self.minimumSplitChunk
        // A floor above the file (zstd's job) is the file's size.
        let whole = (max(1, size) + 0xFFFF) & ~0xFFFF
        fitted.chunkSize = min(chunk, max(smallest, rounded), whole)
        return fitted
    }

    /// These options for a patch (``patchReference``) of an input of `size`
    /// bytes: one chunk of the whole input, one pipeline worker (its context
    /// runs ``patchWorkers`` of libzstd's), no seek table, and zstd's window
    /// for the two sizes; long-distance matching at that window where zstd
    /// turns it on, else the window alone (`--zstd=wlog=` wins over both).
    private func fittedForPatch(against reference: PatchReference, inputSize size: Int?) -> CompressionOptions {
        var fitted = self
        // As zstd: -T1 is one worker of libzstd's (its --single-thread, none).
        fitted.patchWorkers = resolvedThreads
        fitted.threads = 1
        fitted.chunksInFlight = 1
        fitted.splitSmallInputs = false
        fitted.seekTable = false
        fitted.rsyncable = false
        fitted.adaptiveLevels = nil
        fitted.chunkSize = min(Self.maximumChunkSize, (max(1, size ?? chunkSize) + 0xFFFF) & ~0xFFFF)
        let window = reference.windowLog(newSize: size)
        if longWindowLog != nil
            || PatchReference.needsLongDistance(
                level: level, windowLog: window, newSize: size, oldSize: reference.count)
        {
            fitted.longWindowLog = max(longWindowLog ?? 0, window)
        } else if fitted.parameters.windowLog == nil {
            fitted.parameters.windowLog = window
        }
        return fitted
    }

    /// libzstd's own workers for a patch's one frame (``patchReference``):
    /// ``threads``, as zstd's -T; set by ``fitted(toInputSize:)``.
    package var patchWorkers = 0

    /// The chunk size before `fitted(toInputSize:)`: ``chunkSize``, raised
    /// with ``longWindowLog`` to the window (at most ``maximumChunkSize``).
    package var resolvedChunkSize: Int {
        guard let longWindowLog else { return chunkSize }
        return max(chunkSize, min(1 << longWindowLog, Self.maximumChunkSize))
    }

    /// Whether a regular file is mapped: ``mapInput``, except under a
    /// `--long` window larger than the default chunk, where it is read: long
    /// matches reach anywhere in a chunk of that window's size, and across a
    /// mapping of page-cache pages they cost more CPU than across a read
    /// buffer (bench/results/2026-11-22-long.md).
    package var resolvedMapInput: Bool {
        // A patch's input is mapped whatever its window: libzstd's workers
        // copy it, so its pages go back as they are taken (CompressionContext).
        guard mapInput, patchReference == nil, let longWindowLog else { return mapInput }
        return 1 << longWindowLog <= Self.defaultChunkSize
    }

    /// `threads`, with 0 resolved to the cores this process may use.
    package var resolvedThreads: Int {
        threads > 0 ? threads : Self.availableCores
    }

    /// The in-flight bound actually used: one chunk per worker being
    /// compressed and one read ahead, so a worker that finishes finds its
    /// next chunk ready. A frame's write is quick next to a compression; a
    /// further slot for it made no difference in speed and cost one chunk of
    /// memory (docs/pipes.md).
    package var resolvedChunksInFlight: Int {
        max(1, chunksInFlight ?? resolvedThreads + 1)
    }

    /// The window (log2 bytes) frames are compressed with.
    ///
    /// Independent frames lose the history a single stream would carry across
    /// chunk boundaries; at the levels whose own window is 1 or 2 MiB (-2 to
    /// -8) a 4 MiB window (22) wins that back for a little CPU, where 23
    /// would cost 20 MiB more memory at two workers (docs/design.md). -1 and
    /// `--fast` keep their own 512 KiB: their frames are already zstd -T2's
    /// size with it, and a mapped chunk keeps a window resident per worker.
    /// Higher levels keep their own (22 or more).
    ///
    /// With ``longWindowLog``, that window.
    package var resolvedWindowLog: Int? { windowLog(atLevel: level) }

    /// ``resolvedWindowLog`` for frames at `level` (under
    /// ``adaptiveLevels``, each frame's own).
    package func windowLog(atLevel level: Int) -> Int? {
        if let longWindowLog { return longWindowLog }
        guard chunkSize > 1 << 21,
            (20..<22).contains(CompressionParameters().resolved(level: level, size: nil).windowLog)
        else { return nil }
        return 22
    }

    /// What makes the output of an input of `size` bytes what it is, as one
    /// line: the options after fitting, the dictionary (its ID, size and a
    /// hash of its bytes) and libzstd's version. Two runs with the same
    /// fingerprint write the same bytes, so one may finish what the other
    /// began (``PartialOutput``).
    package func resumeFingerprint(size: Int) -> String {
        let options = fitted(toInputSize: size)
        let dictionary = ResumeRecord.fingerprint(of: options.dictionary)
        return "level=\(options.level) chunk=\(options.chunkSize) check=\(options.checksum) "
            + "size=\(options.contentSize) window=\(options.resolvedWindowLog ?? 0) long=\(options.longWindowLog ?? 0) "
            + "dictionary=\(dictionary) dictID=\(options.dictionaryID) params=\(options.parameters) "
            + "libzstd=\(Zstd.libraryVersion)"
    }

    /// The number of cores this process may keep busy (online cores, its
    /// affinity mask and its cgroup's CPU quota: `ProcessLimits`), read
    /// once: a run of many small files asks for it several times per file.
    package static var availableCores: Int { ProcessLimits.current.availableCores }
}
