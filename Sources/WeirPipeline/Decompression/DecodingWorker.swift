import WeirFormats
import WeirSystem

/// What one of the pipeline's decoding workers holds: it decodes a whole
/// zstd frame (``WholeFrameDecoder``) or a whole member of another format
/// (``WholeMemberDecoder``: a gzip member, an lz4 frame, an xz stream).
///
/// The zstd context is made with the worker; each other library's state is
/// made the first time the worker decodes a member of its format, then
/// reused (``WholeMemberCodec``, in the codec layer). Used by one worker at
/// a time (``WorkerPool``).
final class DecodingWorker {
    /// The worker's libzstd context.
    let zstd: DecompressionContext
    /// The other formats' whole-member decoding (libdeflate's and liblz4's
    /// state, made the first time a member of their format comes).
    let members: WholeMemberCodec

    /// Phase 1 of a frame decoded by blocks (``ParallelFrameDecoder``),
    /// made the first time the worker decodes a block.
    private var blocks: BlockDecodingContext?
    private let path: String

    init(zstd: DecompressionContext, path: String) {
        self.zstd = zstd
        self.path = path
        members = WholeMemberCodec(path: path)
    }

    /// The worker's block decoder, made at its first use.
    func blockContext() throws(WeirError) -> BlockDecodingContext {
        if let blocks { return blocks }
        let made = try BlockDecodingContext(path: path)
        blocks = made
        return made
    }
}
