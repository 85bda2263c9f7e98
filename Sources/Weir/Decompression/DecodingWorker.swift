import CFormats
import WeirFormats
import WeirSystem

/// What one of the pipeline's decoding workers holds: it decodes a whole
/// zstd frame (``WholeFrameDecoder``) or a whole member of another format
/// (``WholeMemberDecoder``: a gzip member, an lz4 frame, an xz stream).
///
/// The zstd context is made with the worker; each other library's state is
/// made the first time the worker decodes a member of its format, then
/// reused (liblzma's one-call decoder makes its own). Used by one worker at
/// a time (``WorkerPool``).
final class DecodingWorker {
    /// The worker's libzstd context.
    let zstd: DecompressionContext
    private let path: String
    /// libdeflate's decompressor, once a gzip member came.
    private var gzip: OpaquePointer?
    /// liblz4's decompression context, once an lz4 frame came.
    private var lz4: OpaquePointer?

    init(zstd: DecompressionContext, path: String) {
        self.zstd = zstd
        self.path = path
    }

    deinit {
        if let gzip { libdeflate_free_decompressor(gzip) }
        if let lz4 { LZ4F_freeDecompressionContext(lz4) }
    }

    /// The worker's libdeflate decompressor.
    func inflater() throws(WeirError) -> OpaquePointer {
        if let gzip { return gzip }
        guard let made = libdeflate_alloc_decompressor() else {
            throw .outOfMemory(path: path, operation: .decompress, creating: "a gzip decoder")
        }
        gzip = made
        return made
    }

    /// The worker's liblz4 decompression context, reset for a new frame.
    func lz4Decoder() throws(WeirError) -> OpaquePointer {
        if let lz4 {
            LZ4F_resetDecompressionContext(lz4)
            return lz4
        }
        var made: OpaquePointer?
        guard LZ4F_isError(LZ4F_createDecompressionContext(&made, UInt32(LZ4F_VERSION))) == 0, let made else {
            throw .outOfMemory(path: path, operation: .decompress, creating: "an lz4 decoder")
        }
        lz4 = made
        return made
    }
}
