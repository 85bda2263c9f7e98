import CZstd

/// Learns a dictionary from samples (`--train`) with libzstd's stable
/// builder, `ZDICT_trainFromBuffer`: fastCover with d=8, f=20 and k chosen
/// among 4 steps, aimed at level 3 — the parameters `zstd --train` uses by
/// default, so both make the same dictionary from the same samples.
package enum DictionaryTrainer {
    /// zstd's default `--maxdict`: 110 KiB.
    package static let defaultMaximumSize = 112_640

    /// Trains a dictionary of at most `maximumSize` bytes.
    ///
    /// - Parameters:
    ///   - samples: as ``TrainingSamples/load(paths:dictionarySize:dictionaryPath:)`` gathered them.
    ///   - maximumSize: the dictionary's capacity (`--maxdict`).
    ///   - path: the dictionary file to be written, for messages.
    /// - Throws: ``WeirError`` `.library` when libzstd cannot learn one
    ///   (for example, samples too few or too small for any content).
    package static func train(_ samples: TrainingSamples, maximumSize: Int, path: String) throws(WeirError) -> ZstdDictionary {
        var dictionary = [UInt8](repeating: 0, count: maximumSize)
        let sizes = samples.sizes
        let size = dictionary.withUnsafeMutableBytes { out in
            samples.buffer.withUnsafeBytes { input in
                sizes.withUnsafeBufferPointer { sizes in
                    ZDICT_trainFromBuffer(out.baseAddress, out.count, input.baseAddress, sizes.baseAddress,
                                          UInt32(sizes.count))
                }
            }
        }
        if ZDICT_isError(size) != 0 {
            throw WeirError.library(path: path, operation: .train,
                                    "dictionary training failed: \(String(cString: ZDICT_getErrorName(size)))")
        }
        dictionary.removeLast(maximumSize - size)
        return ZstdDictionary(bytes: dictionary, path: path)
    }
}
