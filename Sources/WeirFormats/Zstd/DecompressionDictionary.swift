import CZstd
import WeirSystem

/// A ``ZstdDictionary`` digested for decompression (`ZSTD_DDict`), shared by
/// every decoder of a run (`ZSTD_DCtx_refDDict`): libzstd only reads a DDict
/// while decoding, and the contexts hold it so it outlives them.
package final class DecompressionDictionary: @unchecked Sendable {  // ZSTD_DDict pointer: only read once made
    let ddict: OpaquePointer
    /// The dictionary's ID (0 for raw content).
    let id: UInt32
    /// The file it came from, for messages.
    let path: String

    package init(_ dictionary: ZstdDictionary) throws(WeirError) {
        let made = dictionary.bytes.withUnsafeBytes { ZSTD_createDDict($0.baseAddress, $0.count) }
        guard let made else {
            throw WeirError.library(path: dictionary.path, operation: .loadDictionary,
                                    "cannot load the dictionary: not a valid zstd dictionary, or out of memory")
        }
        ddict = made
        id = dictionary.id
        path = dictionary.path
    }

    deinit { ZSTD_freeDDict(ddict) }
}
