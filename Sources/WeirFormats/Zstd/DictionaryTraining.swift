/// How a dictionary is learnt: the builder, the dictionary it should be, and
/// how the samples are taken from the files. The defaults are zstd 1.5.4's,
/// so that a training with them makes the dictionary `zstd --train` makes.
package struct DictionaryTraining: Sendable, Equatable {
    /// zstd's default `--maxdict`: 110 KiB.
    package static let defaultMaximumSize = 112_640

    /// The builder and its parameters.
    package var builder = DictionaryBuilder.zstdDefault
    /// The dictionary's capacity: it is at most this many bytes.
    package var maximumSize = defaultMaximumSize
    /// The ID written in the dictionary, which frames compressed with it
    /// carry; 0 derives one from its content (32768 to 2^31 - 1).
    package var dictionaryID: UInt32 = 0
    /// The level the dictionary is tuned for (its entropy tables, and the
    /// search's measure): zstd's default 3, or the level given with it.
    package var compressionLevel = 3
    /// The threads that try parameters side by side; 1 (zstd's default)
    /// keeps the result independent of which candidate finishes first.
    package var threads = 1
    /// The size each file is cut into samples of; nil: one sample per file,
    /// its first 128 KiB (zstd's `SAMPLESIZE_MAX`, the programs' `TrainingSamples`).
    package var sampleSize: Int?
    /// The most sample bytes loaded; nil: as many as the files give, up to
    /// 2 GB and what the machine can hold.
    package var memoryLimit: Int?

    package init(builder: DictionaryBuilder = .zstdDefault, maximumSize: Int = defaultMaximumSize,
                 dictionaryID: UInt32 = 0, compressionLevel: Int = 3, threads: Int = 1,
                 sampleSize: Int? = nil, memoryLimit: Int? = nil) {
        self.builder = builder
        self.maximumSize = maximumSize
        self.dictionaryID = dictionaryID
        self.compressionLevel = compressionLevel
        self.threads = threads
        self.sampleSize = sampleSize
        self.memoryLimit = memoryLimit
    }
}
