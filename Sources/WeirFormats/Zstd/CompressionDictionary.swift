import CZstd
import WeirSystem

/// A ``ZstdDictionary`` digested for compression at one level (`ZSTD_CDict`).
///
/// zstd.h: a CDict "can be created once and shared by multiple threads
/// concurrently, since its usage is read-only", so one serves every worker's
/// context (`ZSTD_CCtx_refCDict`); it must outlive them, which the contexts
/// ensure by holding it.
package final class CompressionDictionary: @unchecked Sendable {  // ZSTD_CDict pointer: only read once made
    let cdict: OpaquePointer
    /// The ID its frames carry (0: none).
    let id: UInt32

    /// Digests `dictionary` for `level`: the level a referenced CDict
    /// imposes on the context, so it must be the run's.
    package init(_ dictionary: ZstdDictionary, level: Int, path: String) throws(WeirError) {
        let made = dictionary.bytes.withUnsafeBytes { ZSTD_createCDict($0.baseAddress, $0.count, Int32(level)) }
        guard let made else {
            throw WeirError.library(
                path: dictionary.path, operation: .loadDictionary,
                "cannot load the dictionary to compress \(FileName.displayed(path)): "
                    + "not a valid zstd dictionary, or out of memory")
        }
        cdict = made
        id = dictionary.id
    }

    deinit { ZSTD_freeCDict(cdict) }
}
