/// Which of libzstd's three dictionary builders learns a dictionary, with
/// its parameters, as zstd 1.5.4 offers them (`--train-cover`,
/// `--train-fastcover`, `--train-legacy`): the same builder with the same
/// parameters on the same samples makes the same dictionary.
package enum DictionaryBuilder: Sendable, Equatable {
    /// COVER (`ZDICT_trainFromBuffer_cover`): segments of k bytes scored by
    /// their d-byte parts; `f` and `accel` are not used.
    case cover(Parameters)
    /// fastCover (`ZDICT_trainFromBuffer_fastCover`): COVER over a table of
    /// 2^f hashed d-byte parts, faster, `accel` trading quality for speed.
    case fastCover(Parameters)
    /// The first builder (`ZDICT_trainFromBuffer_legacy`), keeping more
    /// content the higher the selectivity; 0 is libzstd's default, 9.
    case legacy(selectivity: UInt32)

    /// What `zstd --train` uses: fastCover with d=8, f=20, 4 steps, 75% of the
    /// samples to train on and accel=1, k optimized (zstdcli.c's
    /// `defaultFastCoverParams`).
    package static let zstdDefault = DictionaryBuilder.fastCover(
        Parameters(d: 8, f: 20, steps: 4, split: 75, accel: 1))

    /// The parameters of COVER and fastCover, as zstd's command line gives
    /// them; 0 leaves one to libzstd (its default, or a search).
    package struct Parameters: Sendable, Equatable {
        /// The segment size.
        package var k: UInt32 = 0
        /// The size of the parts segments are scored by (the "dmer").
        package var d: UInt32 = 0
        /// fastCover: the log2 of its frequency table's size.
        package var f: UInt32 = 0
        /// How many values of k the search tries.
        package var steps: UInt32 = 0
        /// The percentage of the samples trained on; the search measures
        /// candidates on the rest (on all of them at 100).
        package var split: UInt32 = 0
        /// fastCover: 1 (best) to 10 (fastest).
        package var accel: UInt32 = 0
        /// The worst the smallest dictionary kept may compress, in percent
        /// over the largest, when smaller ones are tried; nil: only
        /// dictionaries of the maximum size are made.
        package var shrink: UInt32?

        package init(k: UInt32 = 0, d: UInt32 = 0, f: UInt32 = 0, steps: UInt32 = 0, split: UInt32 = 0,
                     accel: UInt32 = 0, shrink: UInt32? = nil) {
            self.k = k
            self.d = d
            self.f = f
            self.steps = steps
            self.split = split
            self.accel = accel
            self.shrink = shrink
        }

        /// Whether libzstd searches k and d (the optimizing entry points):
        /// when either is not given, as zstd decides.
        package var optimizes: Bool { k == 0 || d == 0 }
    }

    /// Whether training searches parameters, which zstd then prints.
    package var optimizes: Bool {
        switch self {
        case .cover(let parameters), .fastCover(let parameters): parameters.optimizes
        case .legacy: false
        }
    }

    /// The memory the builder needs per byte of samples, zstd's estimate
    /// (dibio.c's `MEMMULT`, `COVER_MEMMULT`, `FASTCOVER_MEMMULT`): it bounds
    /// how much of the samples are loaded to what the machine can give.
    package var memoryPerSampleByte: Int {
        switch self {
        case .cover: 9
        case .fastCover: 1
        case .legacy: 11
        }
    }
}
