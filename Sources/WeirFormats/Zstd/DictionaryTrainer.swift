import CZstd
import WeirSystem

/// Learns a dictionary from samples with the builder a
/// ``DictionaryTraining`` names, calling libzstd's entry points as zstd
/// 1.5.4's dictionary builder (programs/dibio.c) calls them: the same
/// samples and parameters make the same dictionary as `zstd --train…`.
///
/// COVER and fastCover search k (and d, steps…) when k or d is 0 (the
/// `optimize` entry points, `nbThreads` candidates at a time), else train
/// with the parameters as given. libzstd says nothing (notification level 0):
/// the caller reports.
package enum DictionaryTrainer {
    /// The bytes that must follow the samples: the legacy builder may read a
    /// little past their end (zstd's `NOISELENGTH`; its programs fill them
    /// with noise).
    package static let guardLength = 32

    /// Trains a dictionary of at most `training.maximumSize` bytes.
    ///
    /// - Parameters:
    ///   - samples: the samples one after the other, then at least
    ///     ``guardLength`` more bytes.
    ///   - sizes: the size of each sample in `samples`, in order.
    ///   - training: the builder, its parameters, the size, ID and level.
    ///   - path: the dictionary file to be written, for messages.
    /// - Returns: the dictionary, and the builder with the parameters it was
    ///   made with (those the search chose, when it searched).
    /// - Throws: ``WeirError`` `.library` with libzstd's reason when it
    ///   cannot learn one: parameters out of bounds, samples too few or too
    ///   small for any content.
    package static func train(
        _ samples: [UInt8], sizes: [Int], _ training: DictionaryTraining,
        path: String
    ) throws(WeirError) -> (dictionary: ZstdDictionary, builder: DictionaryBuilder) {
        precondition(samples.count >= sizes.reduce(0, +) + guardLength, "samples without their guard bytes")
        var dictionary = [UInt8](repeating: 0, count: training.maximumSize)
        let general = ZDICT_params_t(compressionLevel: Int32(clamping: training.compressionLevel), notificationLevel: 0,
                                     dictID: training.dictionaryID)
        let threads = UInt32(clamping: training.threads)
        var builder = training.builder
        let count = UInt32(sizes.count)
        let size = dictionary.withUnsafeMutableBytes { out in
            samples.withUnsafeBytes { input in
                sizes.withUnsafeBufferPointer { sizes in
                    switch builder {
                    case .cover(let parameters):
                        var cover = ZDICT_cover_params_t(parameters, threads: threads, general: general)
                        guard parameters.optimizes else {
                            return ZDICT_trainFromBuffer_cover(out.baseAddress, out.count, input.baseAddress,
                                                               sizes.baseAddress, count, cover)
                        }
                        let size = ZDICT_optimizeTrainFromBuffer_cover(out.baseAddress, out.count, input.baseAddress,
                                                                       sizes.baseAddress, count, &cover)
                        builder = .cover(DictionaryBuilder.Parameters(cover))
                        return size
                    case .fastCover(let parameters):
                        var fast = ZDICT_fastCover_params_t(parameters, threads: threads, general: general)
                        guard parameters.optimizes else {
                            return ZDICT_trainFromBuffer_fastCover(out.baseAddress, out.count, input.baseAddress,
                                                                   sizes.baseAddress, count, fast)
                        }
                        let size = ZDICT_optimizeTrainFromBuffer_fastCover(out.baseAddress, out.count,
                                                                           input.baseAddress, sizes.baseAddress,
                                                                           count, &fast)
                        builder = .fastCover(DictionaryBuilder.Parameters(fast))
                        return size
                    case .legacy(let selectivity):
                        return ZDICT_trainFromBuffer_legacy(out.baseAddress, out.count, input.baseAddress,
                                                            sizes.baseAddress, count,
                                                            ZDICT_legacy_params_t(selectivityLevel: selectivity,
                                                                                  zParams: general))
                    }
                }
            }
        }
        if ZDICT_isError(size) != 0 {
            throw WeirError.trainingFailed(path: path, String(cString: ZDICT_getErrorName(size)))
        }
        dictionary.removeLast(training.maximumSize - size)
        return (ZstdDictionary(bytes: dictionary, path: path), builder)
    }
}

extension ZDICT_cover_params_t {
    /// COVER's parameters as zstd's command line passes them.
    init(_ parameters: DictionaryBuilder.Parameters, threads: UInt32, general: ZDICT_params_t) {
        self.init(k: parameters.k, d: parameters.d, steps: parameters.steps, nbThreads: threads,
                  splitPoint: Double(parameters.split) / 100, shrinkDict: parameters.shrink == nil ? 0 : 1,
                  shrinkDictMaxRegression: parameters.shrink ?? 0, zParams: general)
    }
}

extension ZDICT_fastCover_params_t {
    /// fastCover's parameters as zstd's command line passes them.
    init(_ parameters: DictionaryBuilder.Parameters, threads: UInt32, general: ZDICT_params_t) {
        self.init(k: parameters.k, d: parameters.d, f: parameters.f, steps: parameters.steps, nbThreads: threads,
                  splitPoint: Double(parameters.split) / 100, accel: parameters.accel,
                  shrinkDict: parameters.shrink == nil ? 0 : 1, shrinkDictMaxRegression: parameters.shrink ?? 0,
                  zParams: general)
    }
}

extension DictionaryBuilder.Parameters {
    /// The parameters a COVER search chose; the split as zstd prints it,
    /// the percentage truncated.
    init(_ chosen: ZDICT_cover_params_t) {
        self.init(k: chosen.k, d: chosen.d, steps: chosen.steps, split: UInt32(chosen.splitPoint * 100),
                  shrink: chosen.shrinkDict == 0 ? nil : chosen.shrinkDictMaxRegression)
    }

    /// The parameters a fastCover search chose.
    init(_ chosen: ZDICT_fastCover_params_t) {
        self.init(k: chosen.k, d: chosen.d, f: chosen.f, steps: chosen.steps, split: UInt32(chosen.splitPoint * 100),
                  accel: chosen.accel, shrink: chosen.shrinkDict == 0 ? nil : chosen.shrinkDictMaxRegression)
    }
}
