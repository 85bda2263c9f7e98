/// The samples `--train` learns a dictionary from, gathered as zstd 1.5.4's
/// dictionary builder (programs/dibio.c) does, so that the same files give
/// the same dictionary: the files in zstd's pseudo-random order, empty files
/// skipped, one sample per file of at most its first 128 KiB, at most 2 GB
/// in all, and at least five samples.
package struct TrainingSamples: Sendable {
    /// The largest sample, zstd's `SAMPLESIZE_MAX`: a dictionary only helps
    /// small data, so only the start of a large file is learnt.
    package static let maximumSampleSize = 128 << 10
    /// The fewest samples zstd trains on (below, it refuses).
    package static let minimumCount = 5
    /// The most sample bytes loaded, zstd's `MAX_SAMPLES_SIZE`.
    static let maximumTotal = 2 << 30

    /// The samples, one after the other.
    package let buffer: [UInt8]
    /// The size of each sample in `buffer`, in order.
    package let sizes: [Int]
    /// What zstd warns about these samples (too small for the dictionary
    /// size, files larger than a sample), for the caller to show.
    package let warnings: [String]

    /// Loads the samples from `paths` for a dictionary of at most
    /// `dictionarySize` bytes, to be written to `dictionaryPath` (which a
    /// refusal names).
    ///
    /// - Throws: ``WeirError`` naming a file that cannot be read, or, with
    ///   fewer than ``minimumCount`` non-empty files, zstd's refusal.
    package static func load(paths: [String], dictionarySize: Int, dictionaryPath: String) throws(WeirError) -> TrainingSamples {
        var warnings: [String] = []
        var buffer: [UInt8] = []
        var sizes: [Int] = []
        var oneTooLarge = false
        var total = 0
        for path in shuffled(paths) {
            let sample = try WholeFile.read(path, limit: maximumSampleSize, operation: .readSample)
            if sample.size == 0 { continue }
            oneTooLarge = oneTooLarge || sample.size > 2 * maximumSampleSize
            sizes.append(sample.bytes.count)
            total += sample.bytes.count
            if buffer.count + sample.bytes.count <= maximumTotal { buffer += sample.bytes } else { sizes.removeLast() }
        }
        if oneTooLarge {
            warnings.append("some samples are very large; a dictionary is only useful for small samples, "
                            + "so only the first \(maximumSampleSize) bytes of each are learnt")
        }
        guard sizes.count >= minimumCount else {
            throw WeirError.library(path: dictionaryPath, operation: .train,
                                    "nb of samples too low: \(sizes.count) non-empty files, training needs at least "
                                        + "\(minimumCount) (one file per sample)")
        }
        if total < dictionarySize * 8 {
            warnings.append("data size of samples too small for target dictionary size: "
                            + "samples should be about 100x larger than target dictionary size")
        }
        if buffer.count < total {
            warnings.append("training samples set too large (\(total >> 20) MB); training on \(buffer.count >> 20) MB only")
        }
        return TrainingSamples(buffer: buffer, sizes: sizes, warnings: warnings)
    }

    /// `paths` in the order zstd's `DiB_shuffle` puts them: a Fisher-Yates
    /// shuffle driven by a fixed-seed generator, so every run (of zstd or of
    /// weir) learns from the same order.
    static func shuffled(_ paths: [String]) -> [String] {
        var paths = paths
        var seed: UInt32 = 0xFD2F_B528
        func next() -> UInt32 {
            var value = seed &* 2_654_435_761
            value ^= 2_246_822_519
            value = (value << 13) | (value >> 19)
            seed = value
            return value >> 5
        }
        var index = paths.count - 1
        while index > 0 {
            let other = Int(next() % UInt32(index + 1))
            paths.swapAt(other, index)
            index -= 1
        }
        return paths
    }
}
