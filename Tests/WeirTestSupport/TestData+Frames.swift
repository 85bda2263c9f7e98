import CZstd

extension TestData {
    /// One frame from libzstd.
    ///
    /// - Parameters:
    ///   - contentSize: write Frame_Content_Size (libzstd then may use a single segment).
    ///   - windowLog: a fixed window log (0: libzstd's choice).
    ///   - streamed: compress without telling libzstd the size first (no
    ///     Frame_Content_Size, no single segment).
    static func compress(_ input: [UInt8], level: Int32 = 3, checksum: Bool, contentSize: Bool = true,
                         windowLog: Int32 = 0, streamed: Bool = false) -> [UInt8] {
        let cctx = ZSTD_createCCtx()!
        defer { ZSTD_freeCCtx(cctx) }
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level)
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, checksum ? 1 : 0)
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, contentSize ? 1 : 0)
        if windowLog != 0 { ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, windowLog) }
        var output = [UInt8](repeating: 0, count: ZSTD_compressBound(input.count))
        let written: Int = input.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { destination in
                var out = ZSTD_outBuffer(dst: destination.baseAddress, size: destination.count, pos: 0)
                var inBuffer = ZSTD_inBuffer(src: source.baseAddress, size: source.count, pos: 0)
                if streamed {
                    while inBuffer.pos < inBuffer.size {
                        precondition(ZSTD_isError(ZSTD_compressStream2(cctx, &out, &inBuffer, ZSTD_e_continue)) == 0)
                    }
                    var empty = ZSTD_inBuffer(src: nil, size: 0, pos: 0)
                    while true {
                        let remaining = ZSTD_compressStream2(cctx, &out, &empty, ZSTD_e_end)
                        precondition(ZSTD_isError(remaining) == 0)
                        if remaining == 0 { break }
                    }
                } else {
                    while true {
                        let remaining = ZSTD_compressStream2(cctx, &out, &inBuffer, ZSTD_e_end)
                        precondition(ZSTD_isError(remaining) == 0)
                        if remaining == 0 { break }
                    }
                }
                return out.pos
            }
        }
        return Array(output.prefix(written))
    }
}
