import CZstd

/// One reusable libzstd decompression context (`ZSTD_DCtx`), driven in
/// streaming mode so that frames of any size decode in bounded memory.
final class DecompressionContext {
    private let dctx: OpaquePointer
    private let path: String

    /// `ZSTD_d_forceIgnoreChecksum`. It is not in the stable header, but the
    /// shared libzstd (1.4.7 and later) accepts it; if it ever refuses, the
    /// error says so and the run fails instead of silently verifying.
    private static let forceIgnoreChecksum = ZSTD_dParameter(rawValue: 1002)

    /// Creates a decoder.
    ///
    /// - Parameters:
    ///   - windowLogMax: the largest window (as a power of two) a frame may
    ///     ask for; the pipelines pass ``WindowLimit/logMax``, a backstop
    ///     behind their exact check of every frame's header.
    ///   - verifyChecksum: when false, content checksums are not verified
    ///     (`--no-check`).
    init(windowLogMax: Int, verifyChecksum: Bool, path: String) throws(WeirError) {
        guard let dctx = ZSTD_createDCtx() else {
            throw WeirError(.library, path: path, operation: "decompress", reason: "cannot create a zstd context: out of memory")
        }
        self.dctx = dctx
        self.path = path
        try Zstd.check(ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, Int32(windowLogMax)),
                       path: path, operation: "set memory limit")
        if !verifyChecksum {
            try Zstd.check(ZSTD_DCtx_setParameter(dctx, Self.forceIgnoreChecksum, 1),
                           path: path, operation: "disable checksum verification")
        }
    }

    deinit { ZSTD_freeDCtx(dctx) }

    /// Forgets any partly decoded frame.
    func reset() {
        ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only)
    }

    /// Runs `ZSTD_decompressStream` once.
    ///
    /// - Returns: 0 when a frame has just been completed and flushed,
    ///   otherwise a hint of how many input bytes the frame still needs.
    func decompress(_ input: inout ZSTD_inBuffer, _ output: inout ZSTD_outBuffer) throws(WeirError) -> Int {
        let result = ZSTD_decompressStream(dctx, &output, &input)
        return try Zstd.check(result, path: path, operation: "decompress")
    }

    /// Decodes `source`, which must hold whole frames, in one pass straight
    /// into `destination` (`ZSTD_decompressDCtx`: no window buffer, no copy).
    /// Checksums are verified unless the context was made with
    /// `verifyChecksum: false`; a frame declaring a content size must decode
    /// to exactly that size.
    ///
    /// - Returns: the bytes written to `destination`.
    /// - Throws: ``WeirError`` `.corrupt`, `.checksumMismatch`, or `.library`
    ///   when `destination` is too small.
    func decompressFrame(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) throws(WeirError) -> Int {
        let result = ZSTD_decompressDCtx(dctx, destination.baseAddress, destination.count,
                                         source.baseAddress, source.count)
        return try Zstd.check(result, path: path, operation: "decompress")
    }
}
