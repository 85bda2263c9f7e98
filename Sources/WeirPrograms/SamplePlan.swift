/// Which bytes of which files become training samples, worked out from the
/// files' sizes alone, as zstd 1.5.4's dictionary builder does (dibio.c's
/// `DiB_fileStats`, then `DiB_loadFiles`): the same sizes give the same
/// samples, hence the same dictionary.
///
/// Empty files give none. Without a sample size, each file gives one sample,
/// its first ``TrainingSamples/maximumSampleSize`` bytes. With one, each file
/// is cut from its start into samples of that size, the last one shorter.
package struct SamplePlan: Sendable, Equatable {
    /// The size of each file, in the order the samples are taken.
    package let fileSizes: [Int]
    /// The size files are cut into; nil: one sample per file.
    package let sampleSize: Int?
    /// How many samples the files give (zstd's `nbSamples`), before the
    /// memory bound: fewer than five and zstd refuses to train.
    package let count: Int
    /// Their bytes (zstd's `totalSizeToLoad`), before the memory bound.
    package let total: Int
    /// Whether a file is over twice the sample limit while one sample is
    /// taken per file: only its start is learnt, which zstd warns about.
    package let oneTooLarge: Bool

    /// - Parameters:
    ///   - fileSizes: the files' sizes, in the order they are taken.
    ///   - sampleSize: the size to cut them into (positive), or nil.
    package init(fileSizes: [Int], sampleSize: Int?) {
        self.fileSizes = fileSizes
        self.sampleSize = sampleSize
        var count = 0, total = 0
        var oneTooLarge = false
        for size in fileSizes where size > 0 {
            if let sampleSize {
                count += (size + sampleSize - 1) / sampleSize
                total += size
            } else {
                oneTooLarge = oneTooLarge || size > 2 * TrainingSamples.maximumSampleSize
                count += 1
                total += min(size, TrainingSamples.maximumSampleSize)
            }
        }
        self.count = count
        self.total = total
        self.oneTooLarge = oneTooLarge
    }

    /// The sizes of the samples each file gives when at most `capacity`
    /// bytes are loaded, one list per file (empty when it gives none), as
    /// zstd loads them: in order, a file's first sample that does not fit
    /// ends the loading; a later sample that does not fit ends that file's,
    /// and the next file may still fit.
    package func samples(capacity: Int) -> [[Int]] {
        var result = [[Int]](repeating: [], count: fileSizes.count)
        var loaded = 0, taken = 0
        for (index, size) in fileSizes.enumerated() where size > 0 {
            guard taken < count else { break }
            let first = min(size, sampleSize ?? TrainingSamples.maximumSampleSize)
            if loaded + first > capacity { break }
            var cuts = [first]
            loaded += first
            taken += 1
            if let sampleSize {
                var done = first
                while done < size && taken < count {
                    let next = min(size - done, sampleSize)
                    if loaded + next > capacity { break }
                    cuts.append(next)
                    loaded += next
                    done += next
                    taken += 1
                }
            }
            result[index] = cuts
        }
        return result
    }
}
