import CZstdSplit
import WeirSystem

/// Phase 1 of a frame decoded by blocks: the entropy decoding of one block
/// into its record, on any worker, in any order (zsplit.h). One context per
/// worker: it keeps the tables it last built, so a block that repeats its
/// predecessor's tables does not build them again.
package final class BlockDecodingContext {
    private let context: OpaquePointer

    package init(path: String) throws(WeirError) {
        guard let context = zs_dctx_create() else {
            throw WeirError.outOfMemory(path: path, operation: .decompress, creating: "a block decoder")
        }
        self.context = context
    }

    deinit { zs_dctx_free(context) }

    /// Decodes `record`, unless its scan failed.
    package func decode(_ record: BlockRecord) {
        if record.status == 0 { record.status = zs_decode_block(context, &record.block) }
    }

    /// For a worker that has no context: the record fails.
    package static func fail(_ record: BlockRecord) {
        record.status = Int32(ZS_ERR_MEMORY)
    }
}
