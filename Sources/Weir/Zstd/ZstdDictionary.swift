import CZstd
import Glibc

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

    /// Writes the dictionary to `path`, replacing the file there as zstd
    /// does, atomically: a reader never sees half a dictionary, nor (with
    /// `sync`, its data on disk before it takes the name) a power cut.
    package func save(to path: String, sync: Bool = true) throws(WeirError) {
        let file = try OutputFile(path: path, force: true)
        do throws(WeirError) {
            var written = 0
            while written < bytes.count {
                let count = bytes.withUnsafeBytes {
                    Glibc.write(file.descriptor.fd, $0.baseAddress! + written, $0.count - written)
                }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw WeirError.system(errno, path: path, operation: .write)
                }
                written += count
            }
            try file.commit(copying: nil, sync: sync)
        } catch {
            file.discard()
            throw error
        }
    }
}
