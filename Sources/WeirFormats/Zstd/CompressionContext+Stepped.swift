import CZstd
import Glibc
import WeirSystem

/// A frame compressed a step at a time from bytes read in place: a file
/// mapping whose pages go back behind the window, or a chunk whose progress
/// someone follows.
extension CompressionContext {
    /// Compresses `mapped`, the bytes of a file mapping, as one frame into
    /// `output`, giving the pages behind the window back as it goes: reading
    /// maps a page in, and the pages of a whole chunk would otherwise stay
    /// in the process until the chunk is unmapped (8 MiB per worker, where
    /// the window is 4 MiB below level 9; 64 MiB at -19, with an 8 MiB
    /// window). libzstd reads them in place (`ZSTD_c_stableInBuffer`), one
    /// step at a time, and never behind the window (the one set, else the
    /// level's); a page given back is the page cache's again, so reading it
    /// anyway would only map it in again. For a chunk not larger than the
    /// window and a step, this is ``compressFrame(_:into:path:)``.
    ///
    /// `read`, if any, is handed each step's bytes (and their offset in
    /// `bytes`) once libzstd has read them, before their pages go back: a
    /// walk of the chunk that costs no page of its own (``compressFrame(_:into:mapped:path:read:)``).
    package func compressFrame(mapped bytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
                               path: String, read: ((UnsafeRawBufferPointer, Int) -> Void)? = nil)
        throws(WeirError) -> Int {
        try compressFrame(stepped: bytes, releasing: true, into: output, path: path, read: read)
    }

    /// Compresses `bytes` as one frame into `output` in steps of
    /// ``mappedStep``, telling ``consumed`` of each; `releasing` (a file
    /// mapping) gives the pages behind the window back as it goes
    /// (``compressFrame(mapped:into:path:)``). Without either reason to
    /// step, or for a chunk not larger than the window and a step when
    /// releasing alone, one call: ``compressFrame(_:into:path:)``.
    func compressFrame(stepped bytes: UnsafeRawBufferPointer, releasing: Bool,
                       into output: UnsafeMutableRawBufferPointer, path: String,
                       read: ((UnsafeRawBufferPointer, Int) -> Void)? = nil) throws(WeirError) -> Int {
        var windowLog: Int32 = 0
        ZSTD_CCtx_getParameter(cctx, ZSTD_c_windowLog, &windowLog)
        if windowLog == 0 {
            // The level's own window, as libzstd sizes it for this chunk.
            var level: Int32 = 0
            ZSTD_CCtx_getParameter(cctx, ZSTD_c_compressionLevel, &level)
            windowLog = Int32(ZSTD_getCParams(level, UInt64(bytes.count), 0).windowLog)
        }
        let window = 1 << Int(windowLog)
        // libzstd's own workers (a patch on -T) copy what they take: the
        // pages behind it go back at once, not behind the window.
        let copies = releasing && workers > 0
        let releases = copies || (releasing && bytes.count - Self.mappedStep > window)
        guard let base = bytes.baseAddress, releases || (consumed != nil && bytes.count > Self.mappedStep) else {
            let written = try compressFrame(bytes, into: output, path: path)
            consumed?(bytes.count)
            read?(bytes, 0)
            return written
        }
        ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only)
        try Zstd.check(ZSTD_CCtx_setParameter(cctx, weir_c_stableInBuffer, 1), path: path,
                       operation: .setParameter("set stable input"))
        defer {
            ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only)
            ZSTD_CCtx_setParameter(cctx, weir_c_stableInBuffer, 0)
        }
        try referencePrefix(path: path)
        try Zstd.check(ZSTD_CCtx_setPledgedSrcSize(cctx, UInt64(bytes.count)), path: path, operation: .compress)
        var out = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
        var input = ZSTD_inBuffer(src: base, size: 0, pos: 0)
        // Whole pages only, as addresses: the first may hold bytes before the chunk.
        let start = Int(bitPattern: base)
        var released = Page.roundUp(start)
        while input.size < bytes.count {
            let stepStart = input.size
            input.size = min(bytes.count, input.size + Self.mappedStep)
            let directive = input.size == bytes.count ? ZSTD_e_end : ZSTD_e_continue
            // With stable input, libzstd counts a step as taken at once
            // (what is short of a block waits in place for the next one).
            let before = input.pos
            let failure = Self.drive(cctx, &out, &input, directive)
            if failure != 0 { throw Zstd.error(failure, path: path, operation: .compress) }
            consumed?(input.pos - before)
            // The step's bytes, read by libzstd and not given back yet (the release stays a step behind).
            read?(UnsafeRawBufferPointer(rebasing: bytes[stepStart ..< input.size]), stepStart)
            // A step of margin: libzstd may hold back the end of what it took.
            let unused = Page.roundDown(start + input.pos - (copies ? 0 : window) - Self.mappedStep)
            if releases && unused > released {
                madvise(UnsafeMutableRawPointer(bitPattern: released), unused - released, MADV_DONTNEED)
                released = unused
            }
        }
        return out.pos
    }

    /// How much of a mapped chunk ``compressFrame(mapped:into:path:)`` hands
    /// libzstd at a time. Two steps stay mapped in beside the window (the one
    /// libzstd reads, and one of margin for the block it may hold back, at
    /// most 128 KiB); a smaller step calls libzstd and `madvise` more often.
    static let mappedStep = 1 << 18
}
