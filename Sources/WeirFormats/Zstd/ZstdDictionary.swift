import CZstd
import Glibc
import WeirSystem

/// A zstd dictionary (`-D DICT`), as bytes: one trained by `zstd --train` or
/// `DictionaryTrainer` (it starts with the dictionary magic number and
/// carries an ID), or any file, used as raw content (ID 0).
///
/// Every frame of a run is compressed with it, and frames that were must be
/// decompressed with the same one. Each run digests it once (a `ZSTD_CDict`
/// or `ZSTD_DDict`) that all its workers share.
public struct ZstdDictionary: Sendable, Equatable {
    /// The largest dictionary file accepted, zstd's `DICTSIZE_MAX`: 32 MiB.
    public static let maximumSize = 32 << 20

    /// The dictionary's content.
    public let bytes: [UInt8]
    /// The ID frames compressed with it carry in their header; 0 for a raw
    /// content dictionary, whose frames carry none.
    public let id: UInt32
    /// The file it came from, for messages.
    public let path: String

    /// A dictionary from bytes already in memory.
    public init(bytes: [UInt8], path: String) {
        self.bytes = bytes
        self.path = path
        id = bytes.withUnsafeBytes { UInt32(ZDICT_getDictID($0.baseAddress, $0.count)) }
    }

    /// Reads the dictionary file `path`, as zstd does: a regular file of at
    /// most ``maximumSize`` bytes.
    ///
    /// - Throws: ``WeirError`` naming the file: missing, unreadable, not a
    ///   regular file, or too large.
    public static func load(path: String) throws(WeirError) -> ZstdDictionary {
        let file = try WholeFile.read(path, limit: maximumSize + 1, operation: .readDictionary)
        guard file.size <= maximumSize else {
            throw WeirError.library(path: path, operation: .readDictionary,
                                    "dictionary file is too large (> \(maximumSize) bytes)")
        }
        return ZstdDictionary(bytes: file.bytes, path: path)
    }
}
