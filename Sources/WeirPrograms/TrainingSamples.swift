import Weir

/// The samples a dictionary is learnt from, gathered as zstd 1.5.4's
/// dictionary builder (programs/dibio.c) does, so that the same files give
/// the same dictionary: the files in zstd's pseudo-random order, cut as
/// ``SamplePlan`` says, at most 2 GB loaded (less when the memory given, or
/// the machine's, is smaller), and at least five samples.
package struct TrainingSamples: Sendable {
    /// The largest sample taken from a file that is not cut, zstd's
    /// `SAMPLESIZE_MAX`: a dictionary only helps small data, so only the
    /// start of a large file is learnt. zstd refuses to cut files into
    /// larger samples.
    package static let maximumSampleSize = 128 << 10
    /// The fewest samples zstd trains on (below, it refuses).
    package static let minimumCount = 5
    /// The most sample bytes loaded, zstd's `MAX_SAMPLES_SIZE`.
    static let maximumTotal = 2 << 30
    /// The bytes of noise after the samples, which the trainer needs.
    static let guardLength = DictionaryTrainer.guardLength

    /// The samples, one after the other, then ``guardLength`` bytes of
    /// zstd's noise (there from the start: appended later, they would copy
    /// up to 2 GB).
    package let buffer: [UInt8]
    /// The size of each sample in `buffer`, in order.
    package let sizes: [Int]
    /// What zstd says about these samples (the memory limit, files larger
    /// than a sample, too little data for the dictionary size, samples left
    /// out), in its words, for the caller to show.
    package let warnings: [String]

    /// Loads the samples of the files `paths` for `training`, whose
    /// dictionary is to be written to `dictionaryPath` (which a refusal names).
    ///
    /// - Parameter memory: the bytes the machine can allocate (see
    ///   ``memoryBound(total:perByte:memory:)``).
    /// - Throws: ``WeirError`` naming a file that cannot be read or that
    ///   shrank while read; with fewer than ``minimumCount`` samples, zstd's
    ///   refusal.
    package static func load(paths: [String], for training: DictionaryTraining, dictionaryPath: String,
                             memory: Int = machineMemory) throws(WeirError) -> TrainingSamples {
        let order = shuffled(paths)
        var fileSizes: [Int] = []
        for path in order {
            fileSizes.append(try WholeFile.read(path, limit: 0, operation: .readSample).size)
        }
        let plan = SamplePlan(fileSizes: fileSizes, sampleSize: training.sampleSize)
        var warnings: [String] = []
        var capacity = min(
            memoryBound(total: plan.total, perByte: training.builder.memoryPerSampleByte, memory: memory),
            plan.total, maximumTotal)
        if let limit = training.memoryLimit {
            warnings.append("setting manual memory limit for dictionary training data at \(limit >> 20) MB")
            capacity = min(capacity, limit)
        }
        if plan.oneTooLarge {
            warnings.append("some samples are very large; a dictionary is only useful for small samples, "
                            + "so only the first \(maximumSampleSize) bytes of each are learnt")
        }
        guard plan.count >= minimumCount else {
            throw WeirError.tooFewSamples(path: dictionaryPath, count: plan.count, minimum: minimumCount)
        }
        if plan.total < training.maximumSize * 8 {
            warnings.append("data size of samples too small for target dictionary size: "
                            + "samples should be about 100x larger than target dictionary size")
        }
        if capacity < plan.total {
            warnings.append(
                "Training samples set too large (\(plan.total >> 20) MB); training on \(capacity >> 20) MB only...")
        }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(capacity + guardLength)
        var sizes: [Int] = []
        for (path, samples) in zip(order, plan.samples(capacity: capacity)) where !samples.isEmpty {
            let length = samples.reduce(0, +)
            let bytes = try WholeFile.read(path, limit: length, operation: .readSample).bytes
            guard bytes.count == length else {
                throw WeirError.changedWhileRead(path: path, operation: .readSample, shrank: true)
            }
            buffer += bytes
            sizes += samples
        }
        buffer += noise(count: guardLength)
        return TrainingSamples(buffer: buffer, sizes: sizes, warnings: warnings)
    }

    /// zstd's `DiB_fillNoise`: the bytes after the samples.
    static func noise(count: Int) -> [UInt8] {
        var accumulator: UInt32 = 2_654_435_761
        return (0..<count).map { _ in
            accumulator = accumulator &* 2_246_822_519
            return UInt8(truncatingIfNeeded: accumulator >> 21)
        }
    }

    /// The most sample bytes a builder needing `perByte` bytes of memory per
    /// sample byte can be given, as zstd's `DiB_findMaxMem` finds it: it
    /// asks for the memory `total` bytes need (rounded up to 8 MiB, plus 8
    /// MiB), 8 MiB less at a time until an allocation succeeds, then keeps
    /// 8 MiB less again. On Linux an allocation larger than `memory` (RAM and
    /// swap, the kernel's overcommit bound) is what fails.
    static func memoryBound(total: Int, perByte: Int, memory: Int) -> Int {
        let step = 8 << 20
        // zstd's g_maxMemory on 64 bits: 128 GiB.
        var asked = min((((total * perByte) >> 23) + 1) << 23 + step, 128 << 30)
        if asked > memory { asked -= (asked - memory + step - 1) / step * step }
        return max(asked - step, 0) / perByte
    }

    /// The machine's RAM and swap, in bytes (`MemTotal` and `SwapTotal` of
    /// /proc/meminfo): the largest allocation Linux's heuristic overcommit
    /// grants. Unbounded when it cannot be read.
    package static var machineMemory: Int {
        guard let file = try? Descriptor.openForReading("/proc/meminfo") else { return .max }
        defer { file.close() }
        guard let text = try? file.readToEnd() else { return .max }
        return machineMemory(meminfo: String(decoding: text, as: UTF8.self)) ?? .max
    }

    /// RAM and swap from the text of /proc/meminfo (`MemTotal:  16314516 kB`).
    static func machineMemory(meminfo: String) -> Int? {
        var total: Int?
        for line in meminfo.split(separator: "\n") {
            let words = line.split(separator: " ")
            guard words.count == 3, words[0] == "MemTotal:" || words[0] == "SwapTotal:", words[2] == "kB",
                  let kibibytes = Int(words[1]) else { continue }
            total = (total ?? 0) + kibibytes << 10
        }
        return total
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
