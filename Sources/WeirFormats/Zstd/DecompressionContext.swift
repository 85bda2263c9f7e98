import CZstd
import Dispatch
import WeirSystem

/// One reusable libzstd decompression context (`ZSTD_DCtx`), driven in
/// streaming mode so that frames of any size decode in bounded memory.
package final class DecompressionContext {
    private let dctx: OpaquePointer
    let path: String
    /// Held so that it outlives the context that references it.
    private let dictionary: DecompressionDictionary?
    /// The old file every frame is decoded against (`--patch-from`), held
    /// so that it outlives the context; referenced again at each reset,
    /// since libzstd forgets a prefix after one frame.
    private let prefix: PatchReference?
    /// Told of the compressed input the decoder has taken, as it takes it,
    /// in steps of at most `FrameDecoder.step` (a frame given whole is then
    /// decoded by streaming, step by step): the progress of the decoding.
    /// nil: nobody asks. Runs on the decoding thread, between two steps.
    package var consumed: (@Sendable (Int) -> Void)?

    /// `ZSTD_d_forceIgnoreChecksum`. It is not in the stable header, but the
    /// shared libzstd (1.4.7 and later) accepts it; if it ever refuses, the
    /// error says so and the run fails instead of silently verifying.
    private static let forceIgnoreChecksum = ZSTD_dParameter(rawValue: 1002)
    /// `ZSTD_d_stableOutBuffer` (libzstd 1.4.9 and later), likewise: the
    /// output buffer stays the same between calls, so the decoder writes into
    /// it and keeps no window buffer of its own.
    private static let stableOutBuffer = ZSTD_dParameter(rawValue: 1001)

    /// Creates a decoder.
    ///
    /// - Parameters:
    ///   - windowLogMax: the largest window (as a power of two) a frame may
    ///     ask for; the pipelines pass ``WindowLimit/logMax``, a backstop
    ///     behind their exact check of every frame's header.
    ///   - verifyChecksum: when false, content checksums are not verified
    ///     (`--no-check`).
    ///   - stableOutput: `ZSTD_decompressStream` decodes each frame into one
    ///   buffer given whole (``decompressFrame(pieces:into:)``), not into
    ///   buffers that change between calls.
    ///   - dictionary: the dictionary every frame is decoded with (`-D`).
    ///   - prefix: the old file a patch is decoded against (`--patch-from`).
    package init(windowLogMax: Int, verifyChecksum: Bool, stableOutput: Bool = false,
         dictionary: DecompressionDictionary? = nil, prefix: PatchReference? = nil, path: String) throws(WeirError) {
        try Zstd.checkLibraryVersion(path: path, operation: .decompress)
        guard let dctx = ZSTD_createDCtx() else {
            throw WeirError.outOfMemory(path: path, operation: .decompress, creating: "a zstd context")
        }
        self.dctx = dctx
        self.path = path
        self.dictionary = dictionary
        self.prefix = prefix
        try referencePrefix()
        if let dictionary {
            try Zstd.check(ZSTD_DCtx_refDDict(dctx, dictionary.ddict), path: path, operation: .useDictionary)
        }
        try Zstd.check(ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, Int32(windowLogMax)),
                       path: path, operation: .setParameter("set memory limit"))
        if !verifyChecksum {
            try Zstd.check(ZSTD_DCtx_setParameter(dctx, Self.forceIgnoreChecksum, 1),
                           path: path, operation: .setParameter("disable checksum verification"))
        }
        if stableOutput {
            try Zstd.check(ZSTD_DCtx_setParameter(dctx, Self.stableOutBuffer, 1),
                           path: path, operation: .setParameter("set a stable output buffer"))
        }
    }

    deinit { ZSTD_freeDCtx(dctx) }

    /// Forgets any partly decoded frame.
    package func reset() {
        ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only)
        // Cannot fail on a context between frames, as a reset leaves it.
        try? referencePrefix()
    }

    /// References ``prefix``, if any, for the next frame.
    private func referencePrefix() throws(WeirError) {
        guard let prefix else { return }
        try Zstd.check(ZSTD_DCtx_refPrefix(dctx, prefix.bytes.baseAddress, prefix.count), path: prefix.path,
                       operation: .readPatchReference)
    }

    /// Runs `ZSTD_decompressStream` once.
    ///
    /// - Returns: 0 when a frame has just been completed and flushed,
    ///   otherwise a hint of how many input bytes the frame still needs.
    func decompress(_ input: inout ZSTD_inBuffer, _ output: inout ZSTD_outBuffer) throws(WeirError) -> Int {
        let result = ZSTD_decompressStream(dctx, &output, &input)
        return try checked(result)
    }

    /// Runs `ZSTD_decompressStream` once on `source` from byte `consumed`
    /// into `destination` from byte `filled`, advancing both.
    ///
    /// - Returns: 0 when a frame has just been completed and flushed,
    ///   otherwise a hint of how many input bytes the frame still needs.
    package func decompressStream(_ source: UnsafeRawBufferPointer, consumed: inout Int,
                          into destination: UnsafeMutableRawBufferPointer, filled: inout Int) throws(WeirError) -> Int {
        var input = ZSTD_inBuffer(src: source.baseAddress, size: source.count, pos: consumed)
        var output = ZSTD_outBuffer(dst: destination.baseAddress, size: destination.count, pos: filled)
        defer {
            consumed = input.pos
            filled = output.pos
        }
        return try decompress(&input, &output)
    }

    /// `source`, whole frames, decoded in one pass straight into
    /// `destination` (`ZSTD_decompressDCtx`: no window buffer, no copy):
    /// libzstd's result, the bytes written or an error code for ``checked(_:)``.
    func decompressOnePass(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Int {
        ZSTD_decompressDCtx(dctx, destination.baseAddress, destination.count, source.baseAddress, source.count)
    }

    /// `result`, unless it is an error: then the ``WeirError`` for it, where
    /// a frame whose dictionary ID is not the dictionary's says so as zstd
    /// does ("Dictionary mismatch") and which `-D` it needs.
    func checked(_ result: Int) throws(WeirError) -> Int {
        guard ZSTD_isError(result) != 0, ZSTD_getErrorCode(result) == ZSTD_error_dictionary_wrong else {
            return try Zstd.check(result, path: path, operation: .decompress)
        }
        throw WeirError.dictionaryMismatch(path: path, operation: .decompress, dictionary: dictionary)
    }
}
