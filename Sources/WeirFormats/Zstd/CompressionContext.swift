import CZstd
import Dispatch
import Glibc
import WeirSystem

/// One reusable libzstd compression context (`ZSTD_CCtx`).
///
/// A context is used by one worker at a time; ``WorkerPool`` hands them out.
/// Reusing a context between frames avoids allocating its tables per chunk.
package final class CompressionContext {
    let cctx: OpaquePointer
    /// Held so that it outlives the context that references it.
    private var dictionary: CompressionDictionary?
    /// The level the next frame is compressed at.
    private(set) var level: Int
    /// Whether `--zstd=wlog=` set the window, which a level change keeps.
    private let windowIsSet: Bool
    /// The worker's check of its frames (`verify`), when asked for.
    package var verifier: FrameVerifier?
    /// The encoder of another format (`--format=`): when set, chunks become
    /// its members, not zstd frames.
    package var member: MemberEncoder?
    /// Told of the input libzstd has taken, as it takes it (a step of a
    /// mapped chunk, a region of a read one): the progress of the work, not
    /// of the reading. nil: nobody asks, and a chunk in one piece is
    /// compressed in one call. Runs on the worker, between two steps.
    package var consumed: (@Sendable (Int) -> Void)?
    /// The old file every frame is compressed against (`--patch-from`):
    /// referenced as the prefix of each frame as it starts, since libzstd
    /// forgets a prefix after one frame.
    package var prefix: PatchReference?

    /// Creates a context that writes frames at `level`, with a content
    /// checksum when `checksum` is true, with Frame_Content_Size unless
    /// `contentSize` is false; `windowLog` overrides the level's window (nil
    /// keeps it); `longDistance` turns on long-distance matching over that
    /// window (`--long`); every frame is compressed with `dictionary`, whose
    /// level must be `level` (a referenced CDict imposes its own), and names
    /// its ID unless `dictionaryID` is false; `parameters` go over the
    /// level's last.
    package init(
        level: Int, checksum: Bool, contentSize: Bool = true, windowLog: Int? = nil, longDistance: Bool = false,
        dictionary: CompressionDictionary? = nil, dictionaryID: Bool = true,
        parameters: CompressionParameters = CompressionParameters(), path: String
    ) throws(WeirError) {
        try Zstd.checkLibraryVersion(path: path, operation: .compress)
        guard let cctx = ZSTD_createCCtx() else {
            throw WeirError.outOfMemory(path: path, operation: .compress, creating: "a zstd context")
        }
        self.cctx = cctx
        self.dictionary = dictionary
        self.level = level
        self.windowIsSet = parameters.windowLog != nil
        try Zstd.check(
            ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, Int32(level)), path: path,
            operation: .setParameter("set level"))
        try Zstd.check(
            ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, checksum ? 1 : 0), path: path,
            operation: .setParameter("set checksum"))
        try Zstd.check(
            ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, contentSize ? 1 : 0), path: path,
            operation: .setParameter("set content size"))
        if let windowLog {
            try Zstd.check(
                ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, Int32(windowLog)), path: path,
                operation: .setParameter("set window"))
        }
        if longDistance {
            try Zstd.check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_enableLongDistanceMatching, 1),
                           path: path, operation: .setParameter("enable long-distance matching"))
        }
        if let dictionary {
            try Zstd.check(ZSTD_CCtx_refCDict(cctx, dictionary.cdict), path: path, operation: .useDictionary)
            try Zstd.check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_dictIDFlag, dictionaryID ? 1 : 0),
                           path: path, operation: .setParameter("set the dictionary ID flag"))
        }
        for setting in parameters.settings {
            try Zstd.check(ZSTD_CCtx_setParameter(cctx, setting.parameter, Int32(clamping: setting.value)),
                           path: path, operation: .setParameter("set \(setting.name)"))
        }
    }

    deinit { ZSTD_freeCCtx(cctx) }

    /// Compresses the next frames at `level` (`--adapt`), with `windowLog`
    /// (nil: the level's own) unless `--zstd=wlog=` set it, and with
    /// `dictionary` digested for that level (a referenced CDict imposes its
    /// own level). The parameters set beside the level stay: libzstd keeps
    /// what was set by hand over what a level chooses.
    package func setLevel(
        _ level: Int, windowLog: Int?, dictionary: CompressionDictionary?, path: String
    ) throws(WeirError) {
        guard level != self.level else { return }
        try Zstd.check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, Int32(level)), path: path,
                       operation: .setParameter("set level"))
        if !windowIsSet {
            try Zstd.check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, Int32(windowLog ?? 0)), path: path,
                           operation: .setParameter("set window"))
        }
        if let dictionary {
            try Zstd.check(ZSTD_CCtx_refCDict(cctx, dictionary.cdict), path: path, operation: .useDictionary)
            self.dictionary = dictionary
        }
        self.level = level
    }

    /// libzstd's estimate of what one context holds while it compresses
    /// frames of `chunkSize` bytes with these settings (those of
    /// ``init(level:checksum:contentSize:windowLog:longDistance:dictionary:dictionaryID:parameters:path:)``):
    /// its match tables, window, block and entropy buffers and, with
    /// `longDistance`, the long-distance tables
    /// (`ZSTD_estimateCCtxSize_usingCCtxParams`, given the chunk as the size
    /// hint: a frame's pledged size shrinks the window and tables as it
    /// does). A chunk in several regions (a pipe read with a progress line)
    /// also copies its window into a stream buffer, not counted here; a
    /// dictionary's tables are shared by every context, not counted either.
    package static func estimatedSize(
        level: Int, windowLog: Int?, longDistance: Bool, parameters: CompressionParameters,
        chunkSize: Int
    ) -> Int {
        guard let params = ZSTD_createCCtxParams() else { return 0 }
        defer { ZSTD_freeCCtxParams(params) }
        let hint = Int32(clamping: max(1, chunkSize))
        ZSTD_CCtxParams_setParameter(params, ZSTD_c_compressionLevel, Int32(level))
        ZSTD_CCtxParams_setParameter(params, weir_c_srcSizeHint, hint)
        if let windowLog { ZSTD_CCtxParams_setParameter(params, ZSTD_c_windowLog, Int32(windowLog)) }
        for setting in parameters.settings {
            ZSTD_CCtxParams_setParameter(params, setting.parameter, Int32(clamping: setting.value))
        }
        if longDistance {
            // libzstd 1.5.4 fills in the long-distance parameters only when
            // a frame starts, and its estimate divides by the unset ones:
            // set them as it would (ZSTD_ldm_adjustParameters), from the
            // window the chunk leaves.
            let base = parameters.resolved(level: level, size: chunkSize).windowLog
            let requested = parameters.windowLog ?? windowLog ?? base
            let sourceLog = Int.bitWidth - (max(64, chunkSize) - 1).leadingZeroBitCount
            let window = max(10, min(requested, sourceLog))
            let hashLog = parameters.ldmHashLog ?? max(6, window - 7)
            let settings: [(ZSTD_cParameter, Int)] = [
                (ZSTD_c_enableLongDistanceMatching, 1), (ZSTD_c_ldmHashLog, hashLog),
                (ZSTD_c_ldmMinMatch, parameters.ldmMinMatch ?? 64),
                (ZSTD_c_ldmBucketSizeLog, min(parameters.ldmBucketSizeLog ?? 3, hashLog)),
                (ZSTD_c_ldmHashRateLog, parameters.ldmHashRateLog ?? max(0, window - hashLog)),
            ]
            for (parameter, value) in settings { ZSTD_CCtxParams_setParameter(params, parameter, Int32(value)) }
        }
        let size = ZSTD_estimateCCtxSize_usingCCtxParams(params)
        return ZSTD_isError(size) != 0 ? 0 : size
    }

    /// libzstd's own worker threads for each frame (`ZSTD_c_nbWorkers`; 0:
    /// none), as `zstd -T N` compresses; weir's pipelines leave it at 0 and
    /// run one context per worker instead.
    package func setWorkers(_ workers: Int, path: String) throws(WeirError) {
        try Zstd.check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_nbWorkers, Int32(clamping: workers)),
                       path: path, operation: .setParameter("set workers"))
        self.workers = workers
    }

    /// libzstd's own workers (``setWorkers(_:path:)``): with any, libzstd
    /// copies its input into its own buffers as it takes it.
    private(set) var workers = 0

    /// References ``prefix``, if any, for the frame about to start (a
    /// session reset keeps it; the frame's start uses it up).
    func referencePrefix(path: String) throws(WeirError) {
        guard let prefix else { return }
        try Zstd.check(ZSTD_CCtx_refPrefix(cctx, prefix.bytes.baseAddress, prefix.count), path: prefix.path,
                       operation: .readPatchReference)
    }

    /// Compresses `chunk` as one complete frame into `output`.
    ///
    /// A chunk in one piece (a mapped file's chunk) goes through the one-shot
    /// `ZSTD_compress2`, which reads it in place; a chunk of several regions
    /// (from a pipe) is fed to `ZSTD_compressStream2` region by region, so it
    /// is never flattened first (libzstd then copies it into its window
    /// buffer). Both write the same frame.
    ///
    /// - Parameters:
    ///   - chunk: the bytes of the frame; may be empty.
    ///   - output: a buffer of at least `Zstd.compressBound(chunk.count)` bytes.
    ///   - mapped: whether `chunk` is a file mapping (``compressFrame(mapped:into:path:)``).
    ///   - read: handed the chunk's bytes (and their offset in it), in
    ///     order, once libzstd has read them, where they still are: a
    ///     mapping's step by step, before their pages go back.
    /// - Returns: the size of the frame written at the start of `output`.
    package func compressFrame(_ chunk: DispatchData, into output: UnsafeMutableRawBufferPointer, mapped: Bool = false,
                               path: String, read: ((UnsafeRawBufferPointer, Int) -> Void)? = nil)
        throws(WeirError) -> Int {
        var failure: Int = 0
        let total = chunk.count
        // The regions point into `chunk`, which outlives this call.
        var first: UnsafeBufferPointer<UInt8>?
        var regions = 0
        chunk.enumerateBytes { region, _, stop in
            regions += 1
            if regions == 1 { first = region } else { stop = true }
        }
        if regions == 1, let first {
            if mapped || consumed != nil {
                return try compressFrame(
                    stepped: UnsafeRawBufferPointer(first), releasing: mapped, into: output, path: path, read: read)
            }
            let written = try compressFrame(UnsafeRawBufferPointer(first), into: output, path: path)
            read?(UnsafeRawBufferPointer(first), 0)
            return written
        }
        ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only)
        try referencePrefix(path: path)
        try Zstd.check(ZSTD_CCtx_setPledgedSrcSize(cctx, UInt64(total)), path: path, operation: .compress)
        var out = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
        if total == 0 {
            var empty = ZSTD_inBuffer(src: nil, size: 0, pos: 0)
            failure = Self.drive(cctx, &out, &empty, ZSTD_e_end)
        } else {
            chunk.enumerateBytes { region, offset, stop in
                let isLast = offset + region.count == total
                failure = feed(region, &out, isLast ? ZSTD_e_end : ZSTD_e_continue)
                if failure != 0 { stop = true }
            }
        }
        if failure != 0 { throw Zstd.error(failure, path: path, operation: .compress) }
        if let read {
            chunk.enumerateBytes { region, offset, _ in read(UnsafeRawBufferPointer(region), offset) }
        }
        return out.pos
    }

    /// Compresses `chunk` as one frame as zstd compresses standard input:
    /// fed as it comes (`ZSTD_e_continue`), then ended with no more input,
    /// so libzstd never learns its size: the header declares none and the
    /// window is the level's for an unknown size, byte for byte zstd's
    /// frame. An empty chunk ends at once, and its frame declares the size
    /// 0, as zstd's of an empty input does.
    ///
    /// - Parameters:
    ///   - windowLog: the window zstd would ask for (`--long=N`,
    ///     `--zstd=wlog=N`); nil for the level's, over the wider one weir
    ///     gives its independent chunks (``CompressionOptions/resolvedWindowLog``),
    ///     which the context gets back after the frame.
    ///   - sizeHint: zstd's `--size-hint`, for this frame only.
    package func compressStreamedFrame(
        _ chunk: DispatchData, into output: UnsafeMutableRawBufferPointer, windowLog: Int?,
        sizeHint: Int? = nil, path: String
    ) throws(WeirError) -> Int {
        ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only)
        var chunkWindowLog: Int32 = 0
        ZSTD_CCtx_getParameter(cctx, ZSTD_c_windowLog, &chunkWindowLog)
        defer {
            ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only)
            ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, chunkWindowLog)
            ZSTD_CCtx_setParameter(cctx, weir_c_srcSizeHint, 0)
        }
        try Zstd.check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, Int32(windowLog ?? 0)), path: path,
                       operation: .setParameter("set window"))
        try Zstd.check(ZSTD_CCtx_setParameter(cctx, weir_c_srcSizeHint, Int32(clamping: sizeHint ?? 0)), path: path,
                       operation: .setParameter("set size hint"))
        try referencePrefix(path: path)
        var out = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
        var failure = 0
        chunk.enumerateBytes { region, _, stop in
            failure = feed(region, &out, ZSTD_e_continue)
            if failure != 0 { stop = true }
        }
        if failure == 0 {
            var end = ZSTD_inBuffer(src: nil, size: 0, pos: 0)
            failure = Self.drive(cctx, &out, &end, ZSTD_e_end)
        }
        if failure != 0 { throw Zstd.error(failure, path: path, operation: .compress) }
        return out.pos
    }

    /// Compresses `bytes`, in one piece, as one complete frame into `output`
    /// with `ZSTD_compress2`, which reads them in place.
    package func compressFrame(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
                       path: String) throws(WeirError) -> Int {
        ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only)
        try referencePrefix(path: path)
        let written = ZSTD_compress2(cctx, output.baseAddress, output.count, bytes.baseAddress, bytes.count)
        if ZSTD_isError(written) != 0 { throw Zstd.error(written, path: path, operation: .compress) }
        return written
    }

    /// Feeds `region` to `ZSTD_compressStream2` with `directive`, in steps
    /// of at most ``mappedStep`` (each told to ``consumed``) when someone
    /// follows the progress. Returns 0 or an error code.
    private func feed(_ region: UnsafeBufferPointer<UInt8>, _ out: inout ZSTD_outBuffer,
                      _ directive: ZSTD_EndDirective) -> Int {
        guard let consumed else {
            var input = ZSTD_inBuffer(src: region.baseAddress, size: region.count, pos: 0)
            return Self.drive(cctx, &out, &input, directive)
        }
        var at = 0
        repeat {
            let step = min(Self.mappedStep, region.count - at)
            let last = at + step == region.count
            var input = ZSTD_inBuffer(src: region.baseAddress.map { $0 + at }, size: step, pos: 0)
            let failure = Self.drive(cctx, &out, &input, last ? directive : ZSTD_e_continue)
            if failure != 0 { return failure }
            consumed(step)
            at += step
        } while at < region.count
        return 0
    }

    /// Feeds `input` to `ZSTD_compressStream2` until it is consumed (and,
    /// for `ZSTD_e_end`, until the frame is complete). Returns 0 or an error code.
    static func drive(_ cctx: OpaquePointer, _ out: inout ZSTD_outBuffer,
                              _ input: inout ZSTD_inBuffer, _ directive: ZSTD_EndDirective) -> Int {
        while true {
            let remaining = ZSTD_compressStream2(cctx, &out, &input, directive)
            if ZSTD_isError(remaining) != 0 { return remaining }
            if directive == ZSTD_e_end ? remaining == 0 : input.pos == input.size { return 0 }
            if out.pos == out.size {  // cannot happen with a compressBound-sized buffer
                return 0 &- Int(ZSTD_error_dstSize_tooSmall.rawValue)
            }
        }
    }
}
